/**
 * The operator's commands on a real Temporal dev server, saying what is true:
 * retry, abandon and cancel refuse what is not an import waiting for them;
 * status exits 1 for a failed import and has --json; list shows running,
 * waiting and failed imports; schedules trigger tells a skipped run from a
 * started one; apply --dry-run names schedules no feed configures; a paused
 * schedule shows no next run; the budget names the guard band before the
 * reset. The imports are stand-ins (test/support/stand-in-operator-workflows.ts)
 * in the states the CLI reads; the CLI runs as the operator runs it, through
 * main() or as a child process where its exit code or its pipes matter.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../worker/cli/main.js';
import { type LocalS3, S3RVER_CREDENTIALS, startLocalS3 } from '../../../worker/demo/local-s3.js';
import type { ImportProgress } from '../../../workflows/contracts/import-workflow.js';
import { retrySignal } from '../../../workflows/contracts/messages.js';
import { objectImportWorkflowId } from '../../../workflows/contracts/nightly.js';
import { nodeArgsFor } from '../../support/compiled-source.js';
import { cliContext, waitFor } from '../../support/operator-actions.js';
import type { StandInImportInput } from '../../support/stand-in-operator-workflows.js';
import { startTcpProxy } from '../../support/tcp-proxy.js';
import { createEnvironment } from '../../support/temporal-server.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const QUEUE = 'operator-commands';
const NOBODY = 'nobody-polls';
const BUCKET = 'crm-drops';

const WAITING: ImportProgress = {
  phase: 'creating-job',
  tenant: 't',
  awaitingRetry: {
    step: 'createImportJob',
    failureType: 'BadRequest',
    failure: 'the service refused the job',
    since: '2026-11-27T00:00:00.000Z',
    until: '2026-12-04T00:00:00.000Z',
  },
};
const UPLOADING: ImportProgress = { phase: 'uploading', tenant: 't' };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(TEMPORAL_|IMPORT_|COMPANY_DATA_|AWS_|S3_)/.test(k)) env[k] = v;
  }
  return { ...env, ...extra };
}

/** The CLI as a child process; `closeStdout` closes the reading end of its stdout at once, as `| head -0` would. */
function runCli(args: string[], env: Record<string, string>, options: { closeStdout?: boolean } = {}): Promise<Run> {
  if (!options.closeStdout) {
    return new Promise((done) => {
      execFile(
        process.execPath,
        [...nodeArgsFor('worker/cli/main.ts'), ...args],
        { cwd: ROOT, env: cleanEnv(env), timeout: 120_000 },
        (err, stdout, stderr) =>
          done({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
      );
    });
  }
  const child = spawn(process.execPath, [...nodeArgsFor('worker/cli/main.ts'), ...args], {
    cwd: ROOT,
    env: cleanEnv(env),
  });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((done) => child.once('exit', (code) => done({ code, stdout: '', stderr })));
}

describe('the operator commands on a real Temporal server', () => {
  let env: TestWorkflowEnvironment;
  let worker: Worker;
  let running: Promise<void>;
  let s3: LocalS3;
  let dir: string;
  let cliEnv: Record<string, string>;

  beforeAll(async () => {
    [env, s3] = await Promise.all([createEnvironment(), startLocalS3({ buckets: [BUCKET] })]);
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: QUEUE,
      workflowsPath: resolve(import.meta.dirname, '../../support/stand-in-operator-workflows.ts'),
    });
    running = worker.run();
    dir = mkdtempSync(join(tmpdir(), 'operator-commands-'));
    cliEnv = { TEMPORAL_ADDRESS: env.address, IMPORT_TASK_QUEUE: QUEUE };
  }, 120_000);

  afterAll(async () => {
    if (worker?.getState() === 'RUNNING') worker.shutdown();
    await running;
    await s3?.close();
    await env?.teardown();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const startImport = (workflowId: string, input: StandInImportInput, taskQueue = QUEUE) =>
    env.client.workflow.start('importFile', { taskQueue, workflowId, args: [input] });
  const signalsOf = async (workflowId: string) =>
    ((await env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? []).filter(
      (e) => e.workflowExecutionSignaledEventAttributes,
    ).length;
  const cli = async (args: string[], extraEnv: Record<string, string> = {}) => {
    const ctx = cliContext({ ...cliEnv, ...extraEnv });
    const code = await main(['node', 'import-worker', ...args], ctx);
    return { code, printed: ctx.printed, warned: ctx.warned };
  };

  describe('retry and abandon', () => {
    it('refuse an import that is not waiting for an operator, send nothing and exit 1', async () => {
      await startImport('uploading-import', { progress: UPLOADING });
      for (const command of ['retry', 'abandon']) {
        const r = await cli([command, 'uploading-import']);
        expect(r.code).toBe(1);
        expect(r.printed).toEqual([]);
        expect(r.warned).toEqual([
          `error: import uploading-import is not waiting for an operator (phase uploading): nothing to ${command}; only an import started with --on-failure await-retry waits, after a fixable failure (see import-worker status uploading-import)`,
        ]);
      }
      expect(await signalsOf('uploading-import')).toBe(0);
    });

    it('refuse the budget ledger and any workflow that is not an import', async () => {
      await env.client.workflow.start('budgetLedger', { taskQueue: NOBODY, workflowId: 'budget-ledger-x', args: [] });
      const r = await cli(['retry', 'budget-ledger-x']);
      expect(r.code).toBe(1);
      expect(r.warned).toEqual([
        'error: workflow budget-ledger-x is a budgetLedger, not an import (importFile): nothing to retry',
      ]);
      expect(await signalsOf('budget-ledger-x')).toBe(0);
    });

    it('refuse an import no worker answers for: whether it waits cannot be told', async () => {
      await startImport('unanswered-import', { progress: WAITING }, NOBODY);
      const r = await cli(['abandon', 'unanswered-import']);
      expect(r.code).toBe(1);
      expect(r.warned[0]).toContain('cannot tell whether import unanswered-import waits for an operator');
      expect(await signalsOf('unanswered-import')).toBe(0);
    });

    it('send the signal to an import waiting for an operator', async () => {
      const handle = await startImport('waiting-import', { progress: WAITING });
      const r = await cli(['retry', 'waiting-import']);
      expect(r.code).toBe(0);
      expect(r.printed).toEqual(['sent retry to waiting-import (it waited after createImportJob failed)']);
      expect(await handle.result()).toBe('retried');
    });
  });

  it('status of a failed import exits 1 as a process, and --json says FAILED with the reason', {
    timeout: 120_000,
  }, async () => {
    const handle = await startImport('failed-import', { progress: UPLOADING, fail: 'p/empty.csv is empty' });
    await handle.result().catch(() => undefined);
    const text = await runCli(['status', 'failed-import'], cliEnv);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('failure   EmptyFile: p/empty.csv is empty');
    expect(text.stderr).toContain('error: workflow failed-import ended FAILED: EmptyFile: p/empty.csv is empty');
    const json = await cli(['status', 'failed-import', '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.printed.join('\n'))).toMatchObject({
      workflowId: 'failed-import',
      type: 'importFile',
      status: 'FAILED',
      failure: 'EmptyFile: p/empty.csv is empty',
    });
  });

  it('cancel stops a running import (status then exits 1) and refuses what is not one', async () => {
    await startImport('to-cancel', { progress: UPLOADING });
    const r = await cli(['cancel', 'to-cancel']);
    expect(r.code).toBe(0);
    expect(r.printed[0]).toMatch(/^cancellation requested for to-cancel/);
    await waitFor(async () =>
      (await env.client.workflow.getHandle('to-cancel').describe()).status.name === 'CANCELLED' ? true : undefined,
    );
    expect((await cli(['status', 'to-cancel'])).code).toBe(1);
    const ledger = await cli(['cancel', 'budget-ledger-x']);
    expect(ledger.code).toBe(1);
    expect(ledger.warned[0]).toContain('is a budgetLedger, not an import');
  });

  it('list shows running, waiting and (with --failed) failed imports, as a table and as JSON', async () => {
    await startImport('list-waiting', { progress: WAITING });
    await startImport('list-uploading', { progress: UPLOADING });
    await startImport('list-failed', { progress: UPLOADING, fail: 'broken' }).then((h) => h.result().catch(() => 0));
    // Visibility is eventually consistent: the list catches up within moments.
    const listed = await waitFor(async () => {
      const r = await cli(['list', '--failed', '--json']);
      const imports = JSON.parse(r.printed.join('\n')).imports as { workflowId: string }[];
      const ids = imports.map((i) => i.workflowId);
      return ['list-waiting', 'list-uploading', 'list-failed'].every((id) => ids.includes(id)) ? imports : undefined;
    }, 500);
    const byId = Object.fromEntries(listed.map((i) => [i.workflowId, i]));
    expect(byId['list-waiting']).toMatchObject({ state: 'waiting-for-operator', phase: 'creating-job' });
    expect(byId['list-uploading']).toMatchObject({ state: 'running', phase: 'uploading' });
    expect(byId['list-failed']).toMatchObject({ state: 'failed', detail: 'EmptyFile: broken' });
    const table = await cli(['list']);
    expect(table.code).toBe(0);
    expect(table.printed[0]).toMatch(/^workflow\s+state\s+phase\s+started\s+detail$/);
    expect(table.printed.some((l) => l.startsWith('list-failed'))).toBe(false);
  });

  describe('schedules', () => {
    let feedsFile: string;
    beforeAll(async () => {
      feedsFile = join(dir, 'feeds.json');
      const feed = {
        id: 'accounts',
        bucket: BUCKET,
        prefix: 'accounts/',
        entityType: 'Account',
        listAction: 'insert',
        schedule: { time: '02:00', timeZone: 'UTC' },
      };
      writeFileSync(feedsFile, JSON.stringify({ feeds: [feed] }));
      expect((await cli(['schedules', 'apply'], { IMPORT_FEEDS_FILE: feedsFile })).code).toBe(0);
    });

    it('trigger says which run it started, and refuses (exit 1) when the server skipped it', async () => {
      const first = await cli(['schedules', 'trigger', 'accounts'], { IMPORT_FEEDS_FILE: feedsFile });
      expect(first.code).toBe(0);
      expect(first.printed).toEqual([expect.stringMatching(/^triggered nightly-accounts: started nightly-accounts-/)]);
      // The stand-in night never ends: the next trigger finds it running.
      const second = await cli(['schedules', 'trigger', 'accounts'], { IMPORT_FEEDS_FILE: feedsFile });
      expect(second.code).toBe(1);
      expect(second.printed).toEqual([]);
      expect(second.warned[0]).toMatch(
        /^error: nightly-accounts was not triggered: the server skipped the run because its previous run is still going \(nightly-accounts-/,
      );
    });

    it('apply --dry-run names a schedule no configured feed wants, instead of saying none exist', async () => {
      const r = await cli(['schedules', 'apply', '--dry-run']);
      expect(r.code).toBe(0);
      expect(r.printed).toEqual([
        'kept       nightly-accounts  (no configured feed; it still runs; --prune deletes it)',
      ]);
    });

    it('list shows no next run for a paused schedule', async () => {
      await env.client.schedule.getHandle('nightly-accounts').pause('holiday');
      const r = await cli(['schedules', 'list']);
      expect(r.printed[1]).toMatch(/^nightly-accounts\s+paused \(holiday\)\s+none \(paused\)\s+/);
    });
  });

  it('start names the true way to import an already imported file again: upload it again', async () => {
    const put = await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'accounts/a.csv', Body: 'x\n1\n' }));
    const workflowId = objectImportWorkflowId(BUCKET, 'accounts/a.csv', put.ETag as string);
    const handle = await startImport(workflowId, { progress: WAITING });
    await handle.signal(retrySignal);
    await handle.result();
    const s3Env = {
      S3_ENDPOINT: s3.endpoint,
      AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
      AWS_REGION: 'us-east-1',
    };
    const r = await runCli(['start', '--bucket', BUCKET, '--key', 'accounts/a.csv', '--entity-type', 'Account'], {
      ...cliEnv,
      ...s3Env,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `was already imported by workflow ${workflowId}; nothing started. To import the file again, upload it again: S3 gives the new upload a new ETag, and a new version is a new import`,
    );
    expect(r.stderr).not.toContain('--workflow-id');
    // Reading the ETag took an S3 client: the SDK's Node-version notice is not printed with it.
    expect(r.stderr).not.toContain('NodeVersionSupportWarning');
  });

  it('budget names the guard band before the reset, where every import waits with budget left', async () => {
    const ctx = cliContext({ ...cliEnv, IMPORT_TENANT: 'guard' });
    const fixed = new Date('2026-11-27T23:57:00.000Z');
    const r = await main(['node', 'import-worker', 'budget', '--json'], { ...ctx, now: () => fixed });
    expect(r).toBe(0);
    const report = JSON.parse(ctx.printed.join('\n'));
    expect(report.guardBand).toEqual({ from: '2026-11-27T23:55:00.000Z', until: '2026-11-28T00:00:00.000Z' });
    expect(report.endpoints.createJob).toMatchObject({ remaining: 1200 });
    const text = cliContext({ ...cliEnv, IMPORT_TENANT: 'guard' });
    await main(['node', 'import-worker', 'budget'], { ...text, now: () => fixed });
    expect(text.printed).toContainEqual(
      expect.stringMatching(/^createJob .*none granted until the reset \(guard band\)$/),
    );
    expect(text.printed.at(-1)).toMatch(/^guard band from 2026-11-27T23:55:00.000Z: the ledger grants no call/);
  });

  describe('as a process', () => {
    it('budget piped into a reader that leaves ends quietly, without an EPIPE stack trace', {
      timeout: 120_000,
    }, async () => {
      const r = await runCli(['budget'], cliEnv, { closeStdout: true });
      expect(r.stderr).not.toMatch(/EPIPE|^\s+at /m);
      expect(r.code).toBe(0);
    });

    it('a namespace the server does not have is named with the server and what to check', {
      timeout: 120_000,
    }, async () => {
      const r = await runCli(['status', 'x'], { ...cliEnv, TEMPORAL_NAMESPACE: 'no-such-namespace' });
      expect(r.code).toBe(1);
      expect(
        r.stderr
          .trim()
          .split('\n')
          .filter((l) => l.startsWith('error:')),
      ).toEqual([
        `error: Temporal at ${env.address} has no namespace "no-such-namespace"; set TEMPORAL_NAMESPACE to one it has (temporal operator namespace list --address ${env.address})`,
      ]);
    });

    it('start --dry-run with no worker on the queue says so at once and starts nothing', {
      timeout: 120_000,
    }, async () => {
      const r = await runCli(
        [
          'start',
          '--bucket',
          BUCKET,
          '--key',
          'k.csv',
          '--entity-type',
          'Account',
          '--workflow-id',
          'dry',
          '--dry-run',
        ],
        { ...cliEnv, IMPORT_TASK_QUEUE: NOBODY },
      );
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`error: no worker polls task queue "${NOBODY}": a dry run runs on a worker`);
    });

    it('losing Temporal during start --wait names the server and says the import goes on', {
      timeout: 180_000,
    }, async () => {
      const port = Number(env.address.split(':').at(-1));
      const proxy = await startTcpProxy(port);
      const address = `127.0.0.1:${proxy.port}`;
      const child = spawn(
        process.execPath,
        [
          ...nodeArgsFor('worker/cli/main.ts'),
          'start',
          ...['--bucket', BUCKET, '--key', 'k.csv', '--entity-type', 'Account', '--workflow-id', 'lost-1', '--wait'],
        ],
        { cwd: ROOT, env: cleanEnv({ TEMPORAL_ADDRESS: address, IMPORT_TASK_QUEUE: NOBODY }) },
      );
      let output = '';
      child.stdout.on('data', (d: Buffer) => {
        output += d.toString();
      });
      child.stderr.on('data', (d: Buffer) => {
        output += d.toString();
      });
      const exited = new Promise<number | null>((done) => child.once('exit', done));
      await waitFor(() => (output.includes('no worker polls') ? true : undefined), 100);
      proxy.cut();
      await proxy.close();
      expect(await exited).toBe(1);
      expect(output).toMatch(
        new RegExp(
          `^error: stopped following lost-1: lost Temporal at ${address.replace(/\./g, '\\.')} \\(.+\\); check that the server runs and that TEMPORAL_ADDRESS points at it; the import goes on in Temporal: follow it with import-worker status lost-1$`,
          'm',
        ),
      );
      expect(output).not.toContain('Failed to describe workflow');
    });
  });
});
