/**
 * The one way activities reach an entity workflow (the budget ledger, a job
 * record, a mapping lock): an Update with update-with-start, so the entity
 * starts on first use. Three rules, the same for every entity:
 * - Turns: this process sends one Update at a time to a workflow. The server
 *   refuses an Update beyond its in-flight bound (`history.maxInFlightUpdates`,
 *   10 by default) and, in refusing it, drops the workflow's cached state,
 *   which aborts every Update in flight it had not yet accepted: a burst past
 *   the bound thrashes. One at a time keeps ten worker processes inside the
 *   default bound, and costs little: an entity takes its Updates one at a time.
 * - "Not now" is sent again under the same id, so it is answered once: the
 *   bound refused it, the server aborted it before the entity accepted it, the
 *   entity's workflow task ended without taking it up (a worker frozen or lost
 *   while it held the task), or the call timed out. Waits grow and are spread
 *   at random, so a burst drains instead of retrying in lockstep; after the
 *   patience the activity fails with a retryable EntityBusy.
 * - "No" is never sent again: the entity's validator or handler refused it, or
 *   Temporal refused an argument (an id too long): a non-retryable
 *   UpdateRefused that says what and why. Anything else (Temporal unreachable)
 *   is thrown as it came, for the activity's retry policy.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Client,
  isGrpcServiceError,
  ServiceError,
  WithStartWorkflowOperation,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { ApplicationFailure, type UpdateDefinition, type Workflow } from '@temporalio/common';
import pLimit, { type LimitFunction } from 'p-limit';
import { failure } from '../failures.js';

export interface EntityUpdate<Ret, Arg> {
  update: UpdateDefinition<Ret, [Arg]>;
  arg: Arg;
  /** From `updateId()`: the same for the same logical request. */
  updateId: string;
  /** The entity's workflow type, started with `start` when it does not run. */
  workflowType: string;
  start: WithStartWorkflowOperation<Workflow>['options'];
}

export interface EntityUpdatesOptions {
  /** How long one Update keeps being sent again while the answer is "not now". Default 60 s. */
  patienceMs?: number;
}

/** gRPC status codes the rules tell apart. */
const INVALID_ARGUMENT = 3;
const RESOURCE_EXHAUSTED = 8;
const DEFAULT_PATIENCE_MS = 60_000;
const BACKOFF_FIRST_MS = 100;
const BACKOFF_MAX_MS = 5_000;
const UPDATES_IN_FLIGHT_PER_WORKFLOW = 1;
/** The failure type Temporal gives an Update whose workflow task completed without it. */
const UNPROCESSED_UPDATE = 'UnprocessedUpdate';

/** A worker process builds one of these per kind of entity; each kind's workflows are its own. */
export class EntityUpdates {
  private readonly turns = new Map<string, { limit: LimitFunction; users: number }>();

  constructor(
    private readonly client: Client,
    private readonly options: EntityUpdatesOptions = {},
  ) {}

  execute<Ret, Arg>(request: EntityUpdate<Ret, Arg>): Promise<Ret> {
    return this.inTurn(request.start.workflowId, () => this.untilTakenUp(request));
  }

  private async inTurn<T>(workflowId: string, send: () => Promise<T>): Promise<T> {
    const turn = this.turns.get(workflowId) ?? { limit: pLimit(UPDATES_IN_FLIGHT_PER_WORKFLOW), users: 0 };
    this.turns.set(workflowId, turn);
    turn.users += 1;
    try {
      return await turn.limit(send);
    } finally {
      turn.users -= 1;
      if (turn.users === 0) this.turns.delete(workflowId);
    }
  }

  private async untilTakenUp<Ret, Arg>(request: EntityUpdate<Ret, Arg>): Promise<Ret> {
    const patienceMs = this.options.patienceMs ?? DEFAULT_PATIENCE_MS;
    const started = Date.now();
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.client.workflow.executeUpdateWithStart(request.update, {
          args: [request.arg],
          updateId: request.updateId,
          // An operation serves one call only: each send gets its own.
          startWorkflowOperation: new WithStartWorkflowOperation(request.workflowType, request.start),
        });
      } catch (err) {
        const notNow = notNowReason(err);
        if (notNow === undefined) throw refusalOrAsIs(err, request);
        if (Date.now() - started > patienceMs) {
          throw failure(
            'EntityBusy',
            `${request.start.workflowId} did not take up Update ${request.update.name} within ${patienceMs} ms (${notNow}); the activity retries it`,
          );
        }
        const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** attempt);
        await sleep(ceiling / 2 + Math.random() * (ceiling / 2));
      }
    }
  }
}

/** Why the server said "not now", or undefined when it said something else. */
function notNowReason(err: unknown): string | undefined {
  if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return 'the call timed out';
  if (err instanceof WorkflowUpdateFailedError) {
    const unprocessed = err.cause instanceof ApplicationFailure && err.cause.type === UNPROCESSED_UPDATE;
    return unprocessed ? 'its workflow task ended without taking it up' : undefined;
  }
  const grpc = grpcErrorOf(err);
  if (!grpc) return undefined;
  if (grpc.code === RESOURCE_EXHAUSTED) return 'the server holds its bound of Updates in flight';
  // An Update-With-Start's error carries its operation's status message (the SDK's rethrowKnownErrorTypes).
  if (/workflow update was aborted|update registry was cleared/.test(`${grpc.message} ${grpc.details ?? ''}`)) {
    return 'the server aborted it before the workflow accepted it';
  }
  return undefined;
}

/** A "no" as a non-retryable UpdateRefused; anything else unchanged. */
function refusalOrAsIs(err: unknown, request: EntityUpdate<unknown, unknown>): unknown {
  const what = `${request.start.workflowId} refused Update ${request.update.name}`;
  if (err instanceof WorkflowUpdateFailedError) {
    return failure('UpdateRefused', `${what}: ${err.cause?.message ?? err.message}`);
  }
  const grpc = grpcErrorOf(err);
  if (grpc?.code === INVALID_ARGUMENT) {
    return failure('UpdateRefused', `${what}: Temporal refused its arguments (${grpc.message})`);
  }
  return err;
}

function grpcErrorOf(err: unknown): { code: number; message: string; details?: string } | undefined {
  if (isGrpcServiceError(err)) return err;
  if (err instanceof ServiceError && isGrpcServiceError(err.cause)) return err.cause;
  return undefined;
}
