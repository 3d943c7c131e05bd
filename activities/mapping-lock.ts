/**
 * Takes a custom source's mapping lock for an import: an `acquire` Update to
 * the source's lock workflow, started on demand (activities/entity-updates).
 * The Update id names the activity attempt: a resend within the attempt is
 * decided once, while a refused import that asks again later (a new
 * attempt) is decided again. A repeated grant to the same import is harmless
 * (it keeps one entry).
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { MappingObjectType } from '../workflows/contracts/import-input.js';
import {
  type AcquireMappingLockAnswer,
  type AcquireMappingLockRequest,
  MAPPING_LOCK_WORKFLOW_TYPE,
  type MappingLockInput,
  mappingLockWorkflowId,
} from '../workflows/contracts/mapping-lock.js';
import { acquireMappingLockUpdate } from '../workflows/contracts/messages.js';
import { EntityUpdates } from './entity-updates/client.js';
import { updateId } from './entity-updates/update-id.js';

export interface MappingLocks {
  acquire(
    sourceId: string,
    objectType: MappingObjectType,
    request: AcquireMappingLockRequest,
  ): Promise<AcquireMappingLockAnswer>;
}

/** Locks as workflows on `taskQueue` (the worker's main task queue); a worker process builds one. */
export function temporalMappingLocks(client: Client, taskQueue: string): MappingLocks {
  const updates = new EntityUpdates(client);
  return {
    acquire(sourceId, objectType, request) {
      const input: MappingLockInput = { sourceId, objectType };
      return updates.execute({
        update: acquireMappingLockUpdate,
        arg: request,
        updateId: updateId('acquire', ...activityAttempt()),
        workflowType: MAPPING_LOCK_WORKFLOW_TYPE,
        start: {
          workflowId: mappingLockWorkflowId(sourceId, objectType),
          taskQueue,
          args: [input],
          workflowIdConflictPolicy: 'USE_EXISTING',
        },
      });
    },
  };
}

/** The running activity's attempt: its workflow run, activity id and attempt number. */
function activityAttempt(): string[] {
  const info = Context.current().info;
  const run = info.workflowExecution;
  return [run?.workflowId ?? 'standalone', run?.runId ?? '-', info.activityId, String(info.attempt)];
}
