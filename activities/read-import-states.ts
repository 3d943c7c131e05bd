/**
 * Where the child imports a night would start stand already, asked of
 * Temporal before any child starts: an object already imported needs no
 * budget, and one still running from an earlier night is neither imported
 * nor to be started again. A few lookups at a time, so a page of hundreds of
 * objects does not flood the frontend.
 */
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { ImportState, ReadImportStatesInput } from '../workflows/contracts/activities.js';

export interface WorkflowStatuses {
  /** The status name of the latest run with this id (e.g. RUNNING, COMPLETED), or undefined when none exists. */
  statusOf(workflowId: string): Promise<string | undefined>;
}

const LOOKUPS_IN_FLIGHT = 8;

function stateOf(status: string | undefined): ImportState {
  if (status === undefined) return 'absent';
  if (status === 'RUNNING') return 'running';
  if (status === 'COMPLETED') return 'completed';
  return 'ended-otherwise';
}

export function makeReadImportStates(deps: { workflows: WorkflowStatuses }) {
  return async function readImportStates(input: ReadImportStatesInput): Promise<Record<string, ImportState>> {
    const states: Record<string, ImportState> = {};
    const queue = [...input.workflowIds];
    const lookup = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        states[id] = stateOf(await deps.workflows.statusOf(id));
      }
    };
    await Promise.all(Array.from({ length: Math.min(LOOKUPS_IN_FLIGHT, queue.length) }, lookup));
    return states;
  };
}

/** WorkflowStatuses from a Temporal client: `describe` of the latest run of each id. */
export function temporalWorkflowStatuses(client: Client): WorkflowStatuses {
  return {
    async statusOf(workflowId) {
      try {
        return (await client.workflow.getHandle(workflowId).describe()).status.name;
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return undefined;
        throw err;
      }
    },
  };
}
