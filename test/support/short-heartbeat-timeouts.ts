/**
 * A workflow interceptor module for test bundles only: every activity the
 * workflows schedule with a heartbeat timeout gets SHORT_HEARTBEAT_TIMEOUT_MS
 * instead (the product's are 1 or 2 minutes). Tests of a killed, frozen or
 * cut-off worker wait for Temporal to give the activity to another worker,
 * which it does only when that timeout passes; what they prove (who takes
 * over, what reaches the service) does not depend on its length, only on it
 * being longer than the worker's heartbeat throttle (WORKER_HEARTBEAT_THROTTLE,
 * 5 s), so that a live worker is never timed out. It schedules the same
 * commands, with no await of its own, so the workflow's history keeps its
 * shape.
 */
import type {
  ActivityInput,
  Next,
  WorkflowInterceptorsFactory,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';

export const SHORT_HEARTBEAT_TIMEOUT_MS = 15_000;

function shortenHeartbeatTimeout(
  input: ActivityInput,
  next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>,
): Promise<unknown> {
  if (input.options.heartbeatTimeout === undefined) return next(input);
  return next({ ...input, options: { ...input.options, heartbeatTimeout: SHORT_HEARTBEAT_TIMEOUT_MS } });
}

export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [{ scheduleActivity: shortenHeartbeatTimeout }],
});
