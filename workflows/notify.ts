/**
 * Sends a notification through the `notify` activity, retried for a while
 * (a receiver that answers 500 gets it again; every repeat carries the same
 * id), and never fails the workflow that sends it: an import's outcome does
 * not depend on a chat being up. With no webhook configured the activity
 * answers at once, so a failing import costs three more history events.
 */
import { ActivityFailure, log, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { NotificationInput, NotificationKind, NotifyActivities } from './contracts/notification.js';

const { notify } = proxyActivities<NotifyActivities>({
  startToCloseTimeout: '1m',
  // About two hours of tries, then the workflow goes on without it.
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10m', maximumAttempts: 20 },
});

/**
 * An id stable for one event however often it is sent: the workflow, the run
 * (a Reset's new run is a new event) and the kind, with `nth` for an event a
 * run can have more than once.
 */
export function notificationId(kind: NotificationKind, runId: string, nth?: number): string {
  return [workflowInfo().workflowId, runId, kind, ...(nth === undefined ? [] : [String(nth)])].join('/');
}

export async function sendNotification(input: NotificationInput): Promise<void> {
  try {
    await notify(input);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    log.warn(`notification ${input.id} was not delivered: ${err.cause?.message ?? err.message}`);
  }
}
