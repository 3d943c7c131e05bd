/**
 * A reservation the server rejects because the ledger's workflow task ended
 * without taking it up (Temporal's `UnprocessedUpdate`): under the soak it
 * follows a worker frozen or killed while it held the ledger's task. The
 * ledger never saw the request, so it is retried, not failed as a request the
 * ledger refused (which would page an operator for a transient fault).
 *
 * A bare poller stands in for that worker: it takes the ledger's first
 * workflow task, with the reservation in it, and completes the task with
 * nothing, as a worker that lost the request would; the real server then
 * rejects the Update.
 */
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TemporalBudgetGate } from '../../../activities/budget/temporal-gate.js';
import { ServiceCalls } from '../../../activities/service-calls.js';
import { SPEC_BUDGET_SETTINGS } from '../../support/in-memory-budget-gate.js';
import { createEnvironment } from '../../support/temporal-server.js';

let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await createEnvironment();
}, 120_000);

afterAll(async () => {
  await env?.teardown();
});

/** Takes one workflow task from `taskQueue` and completes it without a command or a message. */
async function completeNextTaskWithNothing(taskQueue: string): Promise<number> {
  const service = env.client.workflowService;
  // A long poll needs a deadline of its own (the server refuses one without).
  const task = await env.client.connection.withDeadline(Date.now() + 30_000, () =>
    service.pollWorkflowTaskQueue({
      namespace: 'default',
      taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      identity: 'a worker that lost the request',
    }),
  );
  await service.respondWorkflowTaskCompleted({
    namespace: 'default',
    taskToken: task.taskToken,
    identity: 'a worker that lost the request',
    commands: [],
    messages: [],
  });
  return task.messages?.length ?? 0;
}

it('a reservation the ledger never took up is retried, not refused, and nothing is sent', async () => {
  const taskQueue = `unprocessed-${randomUUID()}`;
  const budget = new TemporalBudgetGate({
    client: env.client,
    taskQueue,
    tenant: `t-${randomUUID()}`,
    settings: SPEC_BUDGET_SETTINGS,
  });
  let sent = 0;
  const call = new ServiceCalls({ budget }, 'unprocessed').run('listJobs', async () => {
    sent += 1;
    return 'answer';
  });
  const outcome = call.then(
    () => undefined,
    (e: unknown) => e,
  );
  // The task carried the reservation (one Update request message) and ended without it.
  expect(await completeNextTaskWithNothing(taskQueue)).toBe(1);
  const err = await outcome;
  expect(err).toBeInstanceOf(ApplicationFailure);
  const f = err as ApplicationFailure;
  expect(f.type).not.toBe('BudgetReservationRejected');
  expect(f.nonRetryable).toBe(false);
  expect(f.message).toContain('listJobs');
  expect(sent).toBe(0);
}, 60_000);
