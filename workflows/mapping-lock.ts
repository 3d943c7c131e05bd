/**
 * The field-mapping lock of one custom source and object type, as an entity
 * workflow (id `mappingLockWorkflowId(sourceId, objectType)`). An import's
 * applyFieldMappings activity takes it through the `acquire` update
 * (update-with-start) before it reads or writes the source's mappings;
 * Updates are handled in this one place, so two imports cannot both find it
 * free. Imports that want the same set share it; one that wants another set
 * is refused while a holder runs. A holder gives it back with the `release`
 * signal when it ends, completed or failed; a holder that never does
 * (terminated, timed out) is dropped once Temporal no longer shows it
 * running: when it stands in someone's way, and at every hourly check. The lock completes once nobody holds it.
 * Under Worker Versioning it is pinned, and a held lock continues as new on a
 * release that became current (see versioning.ts).
 */
import { allHandlersFinished, condition, log, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { MappingLockActivities } from './contracts/activities.js';
import type { MappingLockHolder, MappingLockInput } from './contracts/mapping-lock.js';
import { acquireMappingLockUpdate, mappingLockHoldersQuery, releaseMappingLockSignal } from './contracts/messages.js';
import { acquireRequestProblem, conflictingHolders, withHolder } from './mapping-lock-policy.js';
import { ACTIVITY_RETRY_POLICY, SHORT_CALL_TIMEOUT_MS } from './retry-policies.js';
import { continueAsNewOnCurrentVersion, newVersionIsCurrent } from './versioning.js';

const { readImportStates } = proxyActivities<MappingLockActivities>({
  startToCloseTimeout: SHORT_CALL_TIMEOUT_MS,
  retry: ACTIVITY_RETRY_POLICY,
});

/** How often holders that never released are looked for while the lock is held. */
const HOLDER_CHECK_INTERVAL_MS = 60 * 60 * 1000;

export async function mappingLock(input: MappingLockInput): Promise<void> {
  let holders: MappingLockHolder[] = input.holders ?? [];

  /** Drops the given holders whose workflows Temporal no longer shows running. */
  async function dropEnded(candidates: readonly MappingLockHolder[]): Promise<void> {
    if (candidates.length === 0) return;
    const states = await readImportStates({ workflowIds: candidates.map((h) => h.workflowId) });
    const ended = new Set(candidates.filter((h) => states[h.workflowId] !== 'running').map((h) => h.workflowId));
    for (const id of ended) log.info(`mapping lock: dropping ${id}, which ended without releasing it`);
    holders = holders.filter((h) => !ended.has(h.workflowId));
  }

  setHandler(
    acquireMappingLockUpdate,
    async (request) => {
      if (conflictingHolders(holders, request).length > 0) await dropEnded(conflictingHolders(holders, request));
      // Decided after the last await, on the holders as they are now.
      const conflicts = conflictingHolders(holders, request);
      if (conflicts.length > 0) return { granted: false, heldBy: conflicts.map((h) => h.workflowId) };
      holders = withHolder(holders, request);
      return { granted: true };
    },
    {
      validator: (request) => {
        const problem = acquireRequestProblem(request);
        if (problem) throw new Error(problem);
      },
    },
  );
  setHandler(releaseMappingLockSignal, (signal) => {
    holders = holders.filter((h) => h.workflowId !== signal?.workflowId);
  });
  setHandler(mappingLockHoldersQuery, () => holders);

  for (;;) {
    const settled = await condition(
      () =>
        (holders.length === 0 && allHandlersFinished()) ||
        workflowInfo().continueAsNewSuggested ||
        newVersionIsCurrent(),
      HOLDER_CHECK_INTERVAL_MS,
    );
    if (!settled) {
      await dropEnded(holders);
      continue;
    }
    await condition(allHandlersFinished);
    if (holders.length === 0) return;
    return continueAsNewOnCurrentVersion<typeof mappingLock>({ ...input, holders });
  }
}
