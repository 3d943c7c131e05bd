/**
 * Takes a custom source's mapping lock for an import: an `acquire` Update to
 * the source's lock workflow, started on demand (update-with-start, as the
 * budget ledger is). No Update id is given: a refused import that asks again
 * later must be decided again, and a repeated grant to the same import is
 * harmless (it keeps one entry).
 */
import { type Client, WithStartWorkflowOperation } from '@temporalio/client';
import type { MappingObjectType } from '../workflows/contracts/import-input.js';
import {
  type AcquireMappingLockAnswer,
  type AcquireMappingLockRequest,
  MAPPING_LOCK_WORKFLOW_TYPE,
  type MappingLockInput,
  mappingLockWorkflowId,
} from '../workflows/contracts/mapping-lock.js';
import { acquireMappingLockUpdate } from '../workflows/contracts/messages.js';
import type { mappingLock } from '../workflows/mapping-lock.js';

export interface MappingLocks {
  acquire(
    sourceId: string,
    objectType: MappingObjectType,
    request: AcquireMappingLockRequest,
  ): Promise<AcquireMappingLockAnswer>;
}

/** Locks as workflows on `taskQueue` (the worker's main task queue). */
export function temporalMappingLocks(client: Client, taskQueue: string): MappingLocks {
  return {
    acquire(sourceId, objectType, request) {
      const input: MappingLockInput = { sourceId, objectType };
      return client.workflow.executeUpdateWithStart(acquireMappingLockUpdate, {
        args: [request],
        startWorkflowOperation: new WithStartWorkflowOperation<typeof mappingLock>(MAPPING_LOCK_WORKFLOW_TYPE, {
          workflowId: mappingLockWorkflowId(sourceId, objectType),
          taskQueue,
          args: [input],
          workflowIdConflictPolicy: 'USE_EXISTING',
        }),
      });
    },
  };
}
