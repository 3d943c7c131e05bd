/**
 * Worker Versioning on a real Temporal dev server, done as an operator
 * deploys: release 1 joins the deployment and the CLI makes it current;
 * imports start and wait on their jobs; release 2, whose importFile starts
 * with a timer release 1 never had and no patch guards, joins and the CLI
 * makes it current. The running imports finish on release 1 (every workflow
 * task of theirs done by it), new ones run on release 2, and the budget
 * ledger and a mapping lock held across the switch, pinned like them, move
 * to release 2 by continuing as new.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTemporalBinary } from '../../worker/demo/temporal-binaries.js';
import { ledgerWorkflowId } from '../../workflows/contracts/budget.js';
import type { FieldMappingSet, ImportFileInput } from '../../workflows/contracts/import-input.js';
import { mappingLockWorkflowId } from '../../workflows/contracts/mapping-lock.js';
import type { importFile } from '../../workflows/import-file.js';
import { waitFor } from '../support/operator-actions.js';
import { accountsCsv, type OperatorStack, STACK_BUCKET, startOperatorStack } from '../support/operator-stack.js';
import { jobsNamed } from '../support/sim-inspect.js';
import { RELEASE_2_TIMER_MS } from './worker-versioning/release-2-workflows.js';

const EventType = temporal.api.enums.v1.EventType;
const { VERSIONING_BEHAVIOR_PINNED } = temporal.api.enums.v1.VersioningBehavior;
type History = temporal.api.history.v1.IHistory;
type ImportHandle = WorkflowHandle<typeof importFile>;

const DEPLOYMENT = 'bulk-import';
const RELEASE_2_SOURCE = fileURLToPath(new URL('./worker-versioning/release-2-workflows.ts', import.meta.url));
const run = promisify(execFile);
/** One old and one new import apply this set, so the source's mapping lock is held across the switch. */
const MAPPINGS: FieldMappingSet = {
  sourceId: '1001',
  objectType: 'account',
  mappings: [
    { sourceFieldLabel: 'Account Name', serviceFieldName: 'name', dataType: 'string' },
    { sourceFieldLabel: 'Account Domain', serviceFieldName: 'domain', dataType: 'string' },
  ],
};

describe('Worker Versioning: a release keeps the imports it started', () => {
  let stack: OperatorStack;
  let dir: string;
  let release2Bundle: string;

  beforeAll(async () => {
    // Jobs process for 20 s: long enough to deploy release 2 while release 1's imports wait on theirs.
    stack = await startOperatorStack({ simulator: { processingMs: 20_000 } });
    dir = mkdtempSync(join(tmpdir(), 'worker-versioning-'));
    release2Bundle = join(dir, 'release-2-bundle.js');
    const { code } = await bundleWorkflowCode({ workflowsPath: RELEASE_2_SOURCE, logger: quiet });
    writeFileSync(release2Bundle, code);
    for (const key of ['old-1.csv', 'old-2.csv', 'new-1.csv', 'new-2.csv']) {
      await stack.putObject(key, accountsCsv(64 * 1024));
    }
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** `temporal worker deployment ...` against the test's server, as docs/deploying.md's deploy steps run it. */
  async function deploymentCli(...args: string[]): Promise<string> {
    const cli = findTemporalBinary('dev-server');
    if (!cli) throw new Error('the Temporal CLI is not installed; run `npm run setup:temporal`');
    const where = ['--address', stack.env.address, '--namespace', stack.env.namespace ?? 'default'];
    const { stdout } = await run(cli.path, ['worker', 'deployment', ...args, ...where], { timeout: 30_000 });
    return stdout;
  }

  /** Makes a build current once its workers have registered it (their first polls do, a moment after start). */
  async function setCurrent(buildId: string): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await deploymentCli('set-current-version', '--deployment-name', DEPLOYMENT, '--build-id', buildId, '-y');
        return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }

  const release = (buildId: string, extra: Record<string, string> = {}) =>
    stack.startWorker({ WORKER_DEPLOYMENT_NAME: DEPLOYMENT, WORKER_BUILD_ID: buildId, ...extra });

  const start = (key: string, fieldMappings?: FieldMappingSet): Promise<ImportHandle> => {
    const workflowId = `versioned-${key}-${randomUUID()}`;
    return stack.env.client.workflow.start<typeof importFile>('importFile', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [
        {
          source: { bucket: STACK_BUCKET, key },
          dataImportName: `versioning ${workflowId}`,
          entityType: 'Account',
          listAction: 'insert',
          fieldMappings,
        } satisfies ImportFileInput,
      ],
    });
  };

  /** The version and behaviour Temporal holds for the workflow's latest run. */
  async function versioningOf(workflowId: string): Promise<{ buildId?: string | null; pinned: boolean }> {
    const { raw } = await stack.env.client.workflow.getHandle(workflowId).describe();
    const info = raw.workflowExecutionInfo?.versioningInfo;
    return { buildId: info?.deploymentVersion?.buildId, pinned: info?.behavior === VERSIONING_BEHAVIOR_PINNED };
  }

  /** The build of the worker that completed each workflow task of the history. */
  const taskBuilds = (history: History) =>
    (history.events ?? [])
      .filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
      .map((e) => e.workflowTaskCompletedEventAttributes?.deploymentVersion?.buildId);

  /** Whether release 2's first timer is in the history. */
  const hasRelease2Timer = (history: History) =>
    (history.events ?? []).some(
      (e) =>
        e.eventType === EventType.EVENT_TYPE_TIMER_STARTED &&
        Number(e.timerStartedEventAttributes?.startToFireTimeout?.seconds ?? 0) * 1000 +
          (e.timerStartedEventAttributes?.startToFireTimeout?.nanos ?? 0) / 1e6 ===
          RELEASE_2_TIMER_MS,
    );

  it('running imports finish on release 1, new ones run on release 2, the ledger and the lock move as they continue as new', async () => {
    await release('v1');
    await setCurrent('v1');
    const old = await Promise.all([start('old-1.csv', MAPPINGS), start('old-2.csv')]);
    // Both uploaded: each now waits on its job, which the service processes for 20 s.
    await waitFor(async () => {
      const jobs = await Promise.all(old.map((h) => jobsNamed(stack.sim.baseUrl, h.workflowId)));
      return jobs.every((j) => j[0]?.state === 'processing') ? true : undefined;
    }, 200);
    const ledgerId = ledgerWorkflowId('default');
    const lockId = mappingLockWorkflowId(MAPPINGS.sourceId, MAPPINGS.objectType);
    expect(await versioningOf(ledgerId)).toEqual({ buildId: 'v1', pinned: true });
    expect(await versioningOf(lockId)).toEqual({ buildId: 'v1', pinned: true });

    await release('v2', { WORKFLOW_BUNDLE_PATH: release2Bundle });
    await setCurrent('v2');
    for (const h of old) expect((await h.describe()).status.name).toBe('RUNNING');
    const fresh = await Promise.all([start('new-1.csv', MAPPINGS), start('new-2.csv')]);

    const results = await Promise.all([...old, ...fresh].map((h) => h.result()));
    for (const result of results) expect(result).toMatchObject({ state: 'completed' });

    for (const h of old) {
      expect(await versioningOf(h.workflowId)).toEqual({ buildId: 'v1', pinned: true });
      const history = await h.fetchHistory();
      expect(new Set(taskBuilds(history))).toEqual(new Set(['v1']));
      expect(hasRelease2Timer(history)).toBe(false);
    }
    for (const h of fresh) {
      expect(await versioningOf(h.workflowId)).toEqual({ buildId: 'v2', pinned: true });
      const history = await h.fetchHistory();
      expect(new Set(taskBuilds(history))).toEqual(new Set(['v2']));
      expect(hasRelease2Timer(history)).toBe(true);
    }

    // Release 2's imports reserved through the ledger and asked for the lock the old import held: each
    // run pinned to v1 saw v2 current and continued as new there. The old import's release reached the
    // lock's v2 run, which then completed.
    await waitFor(
      async () =>
        (await stack.env.client.workflow.getHandle(lockId).describe()).status.name === 'COMPLETED' ? true : undefined,
      200,
    );
    for (const entity of [ledgerId, lockId]) {
      expect(await versioningOf(entity)).toEqual({ buildId: 'v2', pinned: true });
      const history = await stack.env.client.workflow.getHandle(entity).fetchHistory();
      expect(history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId).toBeTruthy();
      expect(new Set(taskBuilds(history))).toEqual(new Set(['v2']));
    }
  }, 240_000);
});

const quiet = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: (message: string) => process.stderr.write(`${message}\n`),
};
