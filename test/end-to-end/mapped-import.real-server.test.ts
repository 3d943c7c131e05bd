/**
 * Imports that depend on their field mappings, on the whole stack (real
 * Temporal dev server, the real worker, s3rver, the service simulator), run
 * through the CLI as an operator runs them. A file whose header the service
 * reads only through a custom source's mappings completes, its job created on
 * that source by name; a mapping set the service would never read, or a file
 * it would fail, is refused before any call to the service. The simulator's
 * request log is the witness.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../worker/cli/main.js';
import type { FieldMapping, FieldMappingSet, ImportFileInput } from '../../workflows/contracts/import-input.js';
import type { importFile } from '../../workflows/import-file.js';
import { cliContext } from '../support/operator-actions.js';
import { type OperatorStack, STACK_BUCKET, startOperatorStack } from '../support/operator-stack.js';
import { simJobs, simRequests } from '../support/sim-inspect.js';

const SOURCE_ID = '1001';
const SOURCE_NAME = 'Salesforce CRM';
const COMPANY_WEBSITE: FieldMapping[] = [
  { sourceFieldLabel: 'Company', serviceFieldName: 'name', dataType: 'string' },
  { sourceFieldLabel: 'Website', serviceFieldName: 'domain', dataType: 'string' },
];
const FILE = 'Company,Website\nAcme,acme.example\nGlobex,globex.example\n';

describe('imports that need their field mappings, on the whole stack', () => {
  let stack: OperatorStack;
  let dir: string;
  let ctx: ReturnType<typeof cliContext>;

  beforeAll(async () => {
    stack = await startOperatorStack();
    for (const key of ['mapped.csv', 'mismatch.csv', 'no-label.csv', 'typo.csv', 'half-mapped.csv', 'dry.csv']) {
      await stack.putObject(`mapped/${key}`, FILE);
    }
    dir = mkdtempSync(join(tmpdir(), 'mapped-import-'));
    ctx = cliContext(stack.workerEnv());
    await stack.startWorker();
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function mappingsFile(name: string, set: Partial<FieldMappingSet>): string {
    const path = join(dir, `${name}.json`);
    writeFileSync(
      path,
      JSON.stringify({ sourceId: SOURCE_ID, objectType: 'account', mappings: COMPANY_WEBSITE, ...set }),
    );
    return path;
  }

  /** `import-worker start ... --wait`: its exit code, what it printed, and the requests the service saw meanwhile. */
  async function start(key: string, entityType: string, mappings: string, ...extra: string[]) {
    const before = (await simRequests(stack.sim.baseUrl)).length;
    ctx.printed.length = 0;
    ctx.warned.length = 0;
    const args = ['start', '--bucket', STACK_BUCKET, '--key', `mapped/${key}`, '--entity-type', entityType];
    const code = await main(['node', 'import-worker', ...args, '--mappings-file', mappings, ...extra], ctx);
    const requests = (await simRequests(stack.sim.baseUrl)).slice(before);
    return { code, out: ctx.printed.join('\n'), err: ctx.warned.join('\n'), requests };
  }

  it('completes a file the service reads through the mappings, its job on the custom source by name', async () => {
    const run = await start('mapped.csv', 'Account', mappingsFile('mapped', {}), '--wait');
    expect(run.err).not.toMatch(/fail/i);
    expect(run.code).toBe(0);
    const jobs = (await simJobs(stack.sim.baseUrl)).filter((j) => j.dataImportName.endsWith(' mapped.csv'));
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({
      state: 'completed',
      source: SOURCE_NAME,
      header: ['Company', 'Website'],
      // What the service read: the header through source 1001's account mappings.
      readAs: ['name', 'domain'],
    });
    expect(stack.sim.fieldMappings(SOURCE_ID, 'account')).toEqual(COMPANY_WEBSITE);
    const create = run.requests.find((r) => r.endpoint === 'createJob');
    expect(create?.status).toBe(200);
    expect(run.requests.filter((r) => r.endpoint === 'getCustomSource')).toHaveLength(1);
  });

  it.each<[string, string, string, Partial<FieldMappingSet>, string]>([
    [
      'an account mapping set for a Person import',
      'mismatch.csv',
      'Person',
      {},
      'fieldMappings.objectType must be "person" for Person imports, got "account"',
    ],
    [
      'a mapping whose dataType the service does not document',
      'typo.csv',
      'Account',
      { mappings: [COMPANY_WEBSITE[0]!, { ...COMPANY_WEBSITE[1]!, dataType: 'strin' }] },
      'dataType must be one of string, number, boolean, date (the types the service documents), got "strin"',
    ],
  ])('refuses %s before starting anything: exit 2, no call', async (_what, key, entityType, set, message) => {
    const run = await start(key, entityType, mappingsFile(key, set));
    expect(run.code).toBe(2);
    expect(run.err).toContain(message);
    expect(run.requests).toEqual([]);
  });

  it.each([
    [
      'a mapped label the header lacks',
      'no-label.csv',
      [...COMPANY_WEBSITE, { sourceFieldLabel: 'Web', serviceFieldName: 'url', dataType: 'string' }],
      'lacks the mapped label(s) "Web"',
    ],
    [
      'a required field that neither a label nor a mapping supplies',
      'half-mapped.csv',
      [COMPANY_WEBSITE[0]!],
      'lacks "Account Domain" (or a mapping onto "domain")',
    ],
  ])('refuses a file with %s at preflight: no call to the service', async (_what, key, mappings, message) => {
    const run = await start(key, 'Account', mappingsFile(key, { mappings }), '--wait');
    expect(run.code).toBe(1);
    expect(run.err).toContain(message);
    expect(run.requests).toEqual([]);
    expect((await simJobs(stack.sim.baseUrl)).filter((j) => j.dataImportName.endsWith(` ${key}`))).toEqual([]);
  });

  it('the workflow itself refuses a mismatched set, for inputs that bypass the CLI', async () => {
    const before = (await simRequests(stack.sim.baseUrl)).length;
    const input: ImportFileInput = {
      source: { bucket: STACK_BUCKET, key: 'mapped/mismatch.csv' },
      dataImportName: 'people through account mappings',
      entityType: 'Person',
      fieldMappings: { sourceId: SOURCE_ID, objectType: 'account', mappings: COMPANY_WEBSITE },
    };
    const handle = await stack.env.client.workflow.start<typeof importFile>('importFile', {
      taskQueue: stack.taskQueue,
      workflowId: `mismatch-${Date.now()}`,
      args: [input],
    });
    const err = await handle.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect(cause).toMatchObject({ type: 'InvalidInput' });
    expect((cause as Error).message).toContain('must be "person" for Person imports');
    expect((await simRequests(stack.sim.baseUrl)).slice(before)).toEqual([]);
  });

  it('the dry run says which check fails for a file the mappings leave short, and writes nothing', async () => {
    const run = await start(
      'dry.csv',
      'Account',
      mappingsFile('dry', { mappings: [COMPANY_WEBSITE[0]!] }),
      '--dry-run',
    );
    expect(run.code).toBe(1);
    expect(run.out).toContain('would FAIL');
    expect(`${run.out}\n${run.err}`).toContain('lacks "Account Domain" (or a mapping onto "domain")');
    expect(run.requests.filter((r) => r.method !== 'GET')).toEqual([]);
  });
});
