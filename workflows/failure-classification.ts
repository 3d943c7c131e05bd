/**
 * What a failed step means for the import workflow. Activities fail with an
 * ApplicationFailure whose `type` is a name from failure-types.ts; the
 * workflow sees it wrapped in an ActivityFailure. These helpers unwrap it.
 */
import { ActivityFailure, ApplicationFailure, ChildWorkflowFailure, TimeoutFailure } from '@temporalio/common';
import {
  BUDGET_WAIT_FAILURES,
  type BudgetWaitDetails,
  type FailureType,
  OPERATOR_FIXABLE_FAILURES,
} from './contracts/failure-types.js';

/** The ApplicationFailure at the root of `err`, through activity and child-workflow wrappers. */
function applicationFailureOf(err: unknown): ApplicationFailure | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 8 && current !== undefined; depth++) {
    if (current instanceof ApplicationFailure) return current;
    if (current instanceof ActivityFailure || current instanceof ChildWorkflowFailure) {
      current = current.cause;
      continue;
    }
    return undefined;
  }
  return undefined;
}

/** The failure type name of `err`: the ApplicationFailure's type, `Timeout` for a timeout, else undefined. */
export function failureTypeOf(err: unknown): string | undefined {
  const app = applicationFailureOf(err);
  if (app) return app.type ?? undefined;
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof TimeoutFailure) return 'Timeout';
  return undefined;
}

/** The human-readable reason of `err`, from its root cause. */
export function failureMessageOf(err: unknown): string {
  const app = applicationFailureOf(err);
  if (app) return app.message;
  if (err instanceof ActivityFailure && err.cause) return err.cause.message;
  return err instanceof Error ? err.message : String(err);
}

function isBudgetWaitDetails(v: unknown): v is BudgetWaitDetails {
  if (typeof v !== 'object' || v === null) return false;
  const d = v as Record<string, unknown>;
  return typeof d.endpoint === 'string' && typeof d.resetsAt === 'string' && !Number.isNaN(Date.parse(d.resetsAt));
}

/**
 * The budget wait `err` asks for, or undefined. A budget failure without
 * readable details is treated as a wait until `fallbackResetMs`, never as a
 * failed import: the spec's daily windows always end.
 */
export function budgetWaitOf(err: unknown, fallbackResetMs?: number): BudgetWaitDetails | undefined {
  const app = applicationFailureOf(err);
  if (!app || !(BUDGET_WAIT_FAILURES as readonly string[]).includes(app.type ?? '')) return undefined;
  const details = app.details?.[0];
  if (isBudgetWaitDetails(details)) return details;
  if (fallbackResetMs === undefined) return undefined;
  return { endpoint: 'unknown', resetsAt: new Date(fallbackResetMs).toISOString() };
}

type FailureClass = 'budget-wait' | 'operator-fixable' | 'fatal';

export function classifyFailure(err: unknown): FailureClass {
  const type = failureTypeOf(err);
  if (type !== undefined && (BUDGET_WAIT_FAILURES as readonly string[]).includes(type)) return 'budget-wait';
  if (type !== undefined && (OPERATOR_FIXABLE_FAILURES as readonly string[]).includes(type as FailureType)) {
    return 'operator-fixable';
  }
  return 'fatal';
}
