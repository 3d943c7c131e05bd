/**
 * Two imports of one custom source at once, on a real Temporal dev server with
 * the real worker, s3rver and the service simulator. The service keeps one
 * mapping set per source and its PUT replaces it, so:
 * - different sets: exactly one import applies its set, and the service keeps
 *   that set until its job is done; the other is refused (MappingConflict)
 *   and applies its own set once the operator retries it after the first;
 * - the same set: both proceed side by side;
 * - a holder that was terminated does not keep the lock from the next import.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FieldMapping, FieldMappingSet, ImportFileInput } from '../../workflows/contracts/import-input.js';
import { mappingLockWorkflowId } from '../../workflows/contracts/mapping-lock.js';
import { progressQuery, retrySignal } from '../../workflows/contracts/messages.js';
import type { importFile } from '../../workflows/import-file.js';
import { waitFor } from '../support/operator-actions.js';
import { accountsCsv, type OperatorStack, STACK_BUCKET, startOperatorStack } from '../support/operator-stack.js';
import { simRequests } from '../support/sim-inspect.js';
import { bundleWorkflows, WORKFLOW_SINKS } from '../support/workflow-bundle.js';

type ImportHandle = WorkflowHandle<typeof importFile>;

const FILE_KEY = 'mappings/accounts.csv';
const NAME_AND_DOMAIN: FieldMapping[] = [
  { sourceFieldLabel: 'Account Name', serviceFieldName: 'name', dataType: 'string' },
  { sourceFieldLabel: 'Account Domain', serviceFieldName: 'domain', dataType: 'string' },
];
const NAME_ONLY: FieldMapping[] = [{ sourceFieldLabel: 'Account Name', serviceFieldName: 'name', dataType: 'string' }];

describe('imports sharing a custom source, on a real Temporal server', () => {
  let stack: OperatorStack;

  beforeAll(async () => {
    // Each job processes for 3 s: long enough for the other import to try its mappings meanwhile.
    stack = await startOperatorStack({ simulator: { processingMs: 3_000 } });
    await stack.putObject(FILE_KEY, accountsCsv(50_000));
    await stack.startWorker();
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
  });

  const start = (set: FieldMappingSet, onFailure: ImportFileInput['onFailure']): Promise<ImportHandle> => {
    const workflowId = `mappings-${randomUUID()}`;
    return stack.env.client.workflow.start<typeof importFile>('importFile', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [
        {
          source: { bucket: STACK_BUCKET, key: FILE_KEY },
          dataImportName: `mapping lock ${workflowId}`,
          entityType: 'Account',
          listAction: 'insert',
          fieldMappings: set,
          onFailure,
        },
      ],
    });
  };
  const progressOf = (handle: ImportHandle) => handle.query(progressQuery);
  const mappingPuts = async (sourceId: string) =>
    (await simRequests(stack.sim.baseUrl)).filter(
      (r) => r.endpoint === 'putFieldMappings' && r.path.includes(`/custom-sources/${sourceId}/`),
    );
  const lockStatus = async (sourceId: string) =>
    (await stack.env.client.workflow.getHandle(mappingLockWorkflowId(sourceId, 'account')).describe()).status.name;

  it('different sets at once: one applies its set and keeps it while its job runs; the other waits for a retry', async () => {
    const sourceId = '1001';
    const sets = [NAME_AND_DOMAIN, NAME_ONLY].map((mappings) => ({
      sourceId,
      objectType: 'account' as const,
      mappings,
    }));
    const handles = await Promise.all(sets.map((set) => start(set, 'await-retry')));
    const finished = new Set<number>();
    handles.forEach((h, i) => {
      h.result().then(
        () => finished.add(i),
        () => undefined,
      );
    });

    // Until one is refused, or (the old code) both have completed.
    const refused = await waitFor(async () => {
      for (const [i, h] of handles.entries()) {
        if ((await progressOf(h)).awaitingRetry) return i;
      }
      return finished.size === 2 ? -1 : undefined;
    });
    expect(refused, 'one of the two imports is refused').not.toBe(-1);
    const loser = handles[refused] as ImportHandle;
    const winner = handles[1 - refused] as ImportHandle;
    expect((await progressOf(loser)).awaitingRetry).toMatchObject({
      step: 'applyFieldMappings',
      failureType: 'MappingConflict',
    });
    expect((await progressOf(loser)).awaitingRetry?.failure).toContain(winner.workflowId);

    // The winner's job ran to its end on its own set: nobody else wrote the source's mappings meanwhile.
    await winner.result();
    expect(await mappingPuts(sourceId)).toHaveLength(1);
    expect(stack.sim.fieldMappings(sourceId, 'account')).toEqual(sets[1 - refused]?.mappings);
    expect((await progressOf(loser)).jobId).toBeUndefined();

    // The winner released the lock as it ended: the retried import takes it and applies its own set.
    await loser.signal(retrySignal);
    await expect(loser.result()).resolves.toMatchObject({ state: 'completed' });
    expect(await mappingPuts(sourceId)).toHaveLength(2);
    expect(stack.sim.fieldMappings(sourceId, 'account')).toEqual(sets[refused]?.mappings);
    // Nobody holds the lock any more: its workflow has ended.
    await waitFor(async () => ((await lockStatus(sourceId)) === 'COMPLETED' ? true : undefined), 200);
  });

  it('the same set at once: both imports proceed; their histories and the lock history replay on this code', async () => {
    const set: FieldMappingSet = { sourceId: '1002', objectType: 'account', mappings: NAME_AND_DOMAIN };
    const handles = await Promise.all([start(set, 'fail'), start(set, 'fail')]);
    const results = await Promise.all(handles.map((h) => h.result()));
    expect(results.map((r) => r.state)).toEqual(['completed', 'completed']);
    expect(stack.sim.fieldMappings('1002', 'account')).toEqual(NAME_AND_DOMAIN);

    // Both released the lock as they ended, so it has completed; every one of these runs replays as it ran.
    const lock = stack.env.client.workflow.getHandle(mappingLockWorkflowId('1002', 'account'));
    await waitFor(async () => ((await lock.describe()).status.name === 'COMPLETED' ? true : undefined), 200);
    // The bundle as production builds it: with the import workflows' tracing interceptors.
    const code = await bundleWorkflows();
    for (const handle of [...handles, lock]) {
      await Worker.runReplayHistory(
        { workflowBundle: { code }, sinks: WORKFLOW_SINKS },
        await handle.fetchHistory(),
        handle.workflowId,
      );
    }
  });

  it('a holder terminated while its job runs does not keep the next import out', async () => {
    const sourceId = '1001';
    const first = await start({ sourceId, objectType: 'account', mappings: NAME_ONLY }, 'await-retry');
    await waitFor(async () => (await progressOf(first)).jobId);
    // Terminated: it never releases the lock.
    await first.terminate('operator stopped it');
    const next = await start({ sourceId, objectType: 'account', mappings: NAME_AND_DOMAIN }, 'fail');
    await expect(next.result()).resolves.toMatchObject({ state: 'completed' });
    expect(stack.sim.fieldMappings(sourceId, 'account')).toEqual(NAME_AND_DOMAIN);
  });
});
