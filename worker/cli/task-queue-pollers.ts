/**
 * Whether any worker polls a task queue for workflow tasks: an import whose
 * workflow nobody runs (no worker, or a typo in IMPORT_TASK_QUEUE) shows no
 * progress at all, and only DescribeTaskQueue tells that from a slow start.
 */
import type { WorkflowClient } from '@temporalio/client';

// temporal.api.enums.v1 values, written out: @temporalio/proto is not a runtime dependency of the CLI.
const TASK_QUEUE_KIND_NORMAL = 1;
const TASK_QUEUE_TYPE_WORKFLOW = 1;

/** True when a worker polled the queue for workflow tasks recently (the server remembers a few minutes). */
export async function hasWorkflowPoller(client: WorkflowClient, taskQueue: string): Promise<boolean> {
  const { pollers } = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: taskQueue, kind: TASK_QUEUE_KIND_NORMAL },
    taskQueueType: TASK_QUEUE_TYPE_WORKFLOW,
  });
  return (pollers?.length ?? 0) > 0;
}

export function noWorkerNote(taskQueue: string): string {
  return `no worker polls task queue "${taskQueue}": start one, or check IMPORT_TASK_QUEUE; the import starts when a worker does`;
}
