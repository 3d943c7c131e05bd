/**
 * Preflight and tokens on a real Temporal server: the worker as `npm start`
 * runs it, with the built-in client-credentials token source, s3rver and the
 * service simulator. A file the service would fail costs no job and no
 * upload; a refusal that echoes the token leaves no spelling of it in the
 * workflow's history; a token that expires early is replaced mid-import.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImportFileInput } from '../../workflows/contracts/import-input.js';
import type { importFile } from '../../workflows/import-file.js';
import { TOKEN_ECHOES, tokenEchoSpellings } from '../simulator/auth.js';
import { DEMO_CLIENT, type Simulator } from '../simulator/server.js';
import { type FullStack, startFullStack } from '../support/full-stack.js';

const BUCKET = 'crm-exports';
const TENANT = `preflight-${process.pid}`;

/** Every string in a history, payloads decoded: what anyone with Temporal UI access can read. */
function historyText(history: unknown): string {
  return JSON.stringify(history, (_key, value) => {
    if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
    if (value?.type === 'Buffer' && Array.isArray(value.data)) return Buffer.from(value.data).toString('utf8');
    return value;
  });
}

describe('preflight and tokens on a real Temporal server', () => {
  let stack: FullStack;
  let env: TestWorkflowEnvironment;
  let sim: Simulator;
  let taskQueue: string;

  beforeAll(async () => {
    stack = await startFullStack({
      bucket: BUCKET,
      name: 'preflight',
      simulator: { processingMs: 200 },
      workerEnv: {
        // The built-in client-credentials token source instead of a fixed token.
        COMPANY_DATA_TOKEN: undefined,
        COMPANY_DATA_CLIENT_ID: DEMO_CLIENT.id,
        COMPANY_DATA_CLIENT_SECRET: DEMO_CLIENT.secret,
        IMPORT_POLL_SCHEDULE: '200ms,500ms',
        IMPORT_TENANT: TENANT,
      },
      // The spec's 60 s poll ceiling is the 500 ms schedule's last delay.
      timeCompression: 120,
    });
    ({ env, sim, taskQueue } = stack);
    await stack.putObject('accounts.csv', 'Account Name,Account Domain\nAcme,acme.example\nGlobex,globex.example\n');
    await stack.putObject('no-domain.csv', 'Account Name,Domain\nAcme,acme.example\n');
    // A file version per echo case: one version has one job (its job record), so each case needs its own create.
    for (const echo of TOKEN_ECHOES) {
      await stack.putObject(`echo-${echo}.csv`, 'Account Name,Account Domain\nAcme,acme.example\n');
    }
    await stack.startWorker();
  }, 180_000);

  afterAll(() => stack?.close());

  const input = (key: string, name: string): ImportFileInput => ({
    source: { bucket: BUCKET, key },
    dataImportName: name,
    entityType: 'Account',
    listAction: 'insert',
    tenant: TENANT,
  });

  async function failureOfImport(workflowId: string, args: ImportFileInput) {
    const handle = await env.client.workflow.start<typeof importFile>('importFile', {
      taskQueue,
      workflowId,
      args: [args],
    });
    const err = await handle.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    return { cause: cause as ApplicationFailure, handle };
  }

  it('a file without a label Account imports require fails at preflight: no job, no upload', async () => {
    const before = sim.counters();
    const { cause } = await failureOfImport(`preflight-label-${randomUUID()}`, input('no-domain.csv', 'no domain'));
    expect(cause.type).toBe('InvalidCsvHeader');
    expect(cause.message).toContain('"Account Domain"');
    expect(sim.jobs().filter((j) => j.dataImportName.startsWith('no domain'))).toEqual([]);
    const after = sim.counters();
    expect(after.createJob - before.createJob).toBe(0);
    expect(after.submitData - before.submitData).toBe(0);
  });

  it('imports with an exchanged token, and a token that expires early is replaced without failing the import', async () => {
    const exchangesBefore = sim.issuedTokens().length;
    sim.expireTokenNext('jobStatus');
    const result = await env.client.workflow.execute<typeof importFile>('importFile', {
      taskQueue,
      workflowId: `preflight-token-${randomUUID()}`,
      args: [input('accounts.csv', 'token refresh')],
    });
    expect(result.state).toBe('completed');
    expect(sim.job(result.jobId)).toMatchObject({ state: 'completed', uploads: 1 });
    expect(sim.issuedTokens().length - exchangesBefore).toBeGreaterThanOrEqual(1);
    expect(sim.requests().some((r) => r.endpoint === 'jobStatus' && r.status === 401)).toBe(true);
  });

  it.each(TOKEN_ECHOES)('a 401 that echoes the token %s leaves no spelling of it in the history', async (echo) => {
    // The token, and the one exchanged after the first 401, are both echoed back.
    // The create is the first call after the preflight (the job record needs no search).
    sim.failNext('createJob', 401, { echoToken: echo, count: 2 });
    const { cause, handle } = await failureOfImport(`preflight-echo-${echo}-${randomUUID()}`, {
      ...input(`echo-${echo}.csv`, `echo ${echo}`),
    }).finally(() => sim.clearFaults());
    expect(cause.type).toBe('Unauthorized');
    expect(cause.message).toContain('[redacted]');
    const text = historyText(await handle.fetchHistory());
    expect(text).toContain('[redacted]');
    for (const token of sim.issuedTokens()) {
      for (const spelling of tokenEchoSpellings(token)) expect(text).not.toContain(spelling);
    }
  });
});
