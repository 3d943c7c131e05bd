/**
 * `import-worker retry|abandon <workflowId>`: the operator's answer to an
 * import waiting after a failure; and `cancel <workflowId>`: stop an import.
 * A signal to anything else would be stored and ignored (a running import
 * reads retry/abandon only while it waits; a ledger never), so they are
 * refused, with what the workflow is doing instead, and exit 1.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { loadTemporalConfig } from '../../temporal.config.js';
import type { abandonSignal, retrySignal } from '../../workflows/contracts/messages.js';
import { CliError } from './cli-error.js';
import { type CliContext, withClient } from './context.js';
import { queryProgress } from './import-progress.js';
import { IMPORT_WORKFLOW_TYPE } from './status-report.js';
import { hasWorkflowPoller } from './task-queue-pollers.js';

type OperatorSignal = typeof retrySignal | typeof abandonSignal;

/** The running import behind `workflowId`; refuses any other workflow type, or one that ended. */
async function runningImport(handle: WorkflowHandle, action: string): Promise<{ taskQueue: string }> {
  const description = await handle.describe();
  if (description.type !== IMPORT_WORKFLOW_TYPE) {
    throw new CliError(
      `workflow ${handle.workflowId} is a ${description.type}, not an import (${IMPORT_WORKFLOW_TYPE}): nothing to ${action}`,
    );
  }
  if (description.status.name !== 'RUNNING') {
    throw new CliError(`import ${handle.workflowId} is ${description.status.name}, not running: nothing to ${action}`);
  }
  return { taskQueue: description.taskQueue };
}

export async function signalCommand(signal: OperatorSignal, workflowId: string, ctx: CliContext): Promise<void> {
  await withClient(ctx, loadTemporalConfig(ctx.env), async ({ client }) => {
    const handle = client.workflow.getHandle(workflowId);
    const { taskQueue } = await runningImport(handle, signal.name);
    const polled = await hasWorkflowPoller(client.workflow, taskQueue).catch(() => true);
    const progress = polled ? await queryProgress(handle) : undefined;
    if (!progress) {
      throw new CliError(
        `cannot tell whether import ${workflowId} waits for an operator: no worker answered its progress query (is a worker polling task queue "${taskQueue}"?); nothing sent`,
      );
    }
    if (!progress.awaitingRetry) {
      throw new CliError(
        `import ${workflowId} is not waiting for an operator (phase ${progress.phase}): nothing to ${signal.name}; ` +
          `only an import started with --on-failure await-retry waits, after a fixable failure (see import-worker status ${workflowId})`,
      );
    }
    await handle.signal(signal);
    ctx.print(`sent ${signal.name} to ${workflowId} (it waited after ${progress.awaitingRetry.step} failed)`);
  });
}

export async function cancelCommand(workflowId: string, ctx: CliContext): Promise<void> {
  await withClient(ctx, loadTemporalConfig(ctx.env), async ({ client }) => {
    const handle = client.workflow.getHandle(workflowId);
    await runningImport(handle, 'cancel');
    await handle.cancel();
    ctx.print(
      `cancellation requested for ${workflowId}: the import stops its current step and ends CANCELLED; follow it with import-worker status ${workflowId}`,
    );
  });
}
