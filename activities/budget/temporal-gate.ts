/**
 * The production BudgetGate: reservations go to the ledger workflow of the
 * worker's tenant as Updates, started on demand (update-with-start), so the
 * count is shared by every worker and serialised in one place. The request id
 * doubles as the Update id, so the server also deduplicates a retried RPC.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type Client, isGrpcServiceError, WithStartWorkflowOperation, WorkflowNotFoundError } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import pLimit from 'p-limit';
import type { budgetLedger } from '../../workflows/budget-ledger.js';
import { createState, usage } from '../../workflows/budget-ledger-state.js';
import {
  type BudgetSettings,
  type DailyLimitReport,
  LEDGER_MAX_HISTORY_EVENTS,
  LEDGER_WORKFLOW_TYPE,
  type LedgerInput,
  type LedgerUsage,
  ledgerWorkflowId,
  type ReserveResult,
} from '../../workflows/contracts/budget.js';
import type { BudgetedEndpoint } from '../../workflows/contracts/endpoints.js';
import { dailyLimitUpdate, releaseUpdate, reserveUpdate, usageQuery } from '../../workflows/contracts/messages.js';
import type { BudgetGate } from './gate.js';

interface TemporalBudgetGateOptions {
  client: Client;
  /** Where the ledger workflow runs (the worker's main task queue). */
  taskQueue: string;
  /** The tenant of the worker's credential (IMPORT_TENANT). */
  tenant: string;
  settings: BudgetSettings;
  /** How long one reservation keeps waiting its turn in a burst before its activity fails (and is retried). Default 60 s. */
  burstPatienceMs?: number;
}

/** gRPC's RESOURCE_EXHAUSTED: here, the server's bound on Updates in flight per workflow. */
const RESOURCE_EXHAUSTED = 8;
const DEFAULT_BURST_PATIENCE_MS = 60_000;
const BURST_BACKOFF_FIRST_MS = 100;
const BURST_BACKOFF_MAX_MS = 5_000;
/**
 * Updates this process sends to its ledger at once. The server refuses an
 * Update beyond its in-flight bound (`history.maxInFlightUpdates`, 10 by
 * default) and, in refusing it, drops the workflow's cached state, which
 * aborts every Update already in flight: a burst past the bound thrashes.
 * One at a time per process keeps ten worker processes inside the default
 * bound, and costs little: the ledger takes its Updates one at a time anyway.
 */
const UPDATES_IN_FLIGHT_PER_PROCESS = 1;

/**
 * Calls `send` until the server admits it. Every try carries the same Update
 * id, so a grant is neither lost nor counted twice; the waits grow and are
 * spread at random, so a burst drains instead of retrying in lockstep. (The
 * client's own gRPC retries give up after ten tries, well inside a burst.)
 */
async function admittedInTurn<R>(send: () => Promise<R>, patienceMs: number): Promise<R> {
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return await send();
    } catch (err) {
      if (!waitsItsTurn(err) || Date.now() - started > patienceMs) throw err;
      const ceiling = Math.min(BURST_BACKOFF_MAX_MS, BURST_BACKOFF_FIRST_MS * 2 ** attempt);
      await sleep(ceiling / 2 + Math.random() * (ceiling / 2));
    }
  }
}

/**
 * A refusal that says "not now", never "no": the server's bound on Updates in
 * flight, or an Update the server aborted before the ledger took it up (its
 * speculative workflow task was lost: a slow or vanished worker, or the
 * ledger closing to continue as new). The same Update id sent again is
 * answered once.
 */
function waitsItsTurn(err: unknown): boolean {
  if (!isGrpcServiceError(err)) return false;
  if (err.code === RESOURCE_EXHAUSTED) return true;
  // An Update-With-Start's error carries its operation's status message (the SDK's rethrowKnownErrorTypes).
  return /workflow update was aborted|update registry was cleared/.test(`${err.message} ${err.details ?? ''}`);
}

export class TemporalBudgetGate implements BudgetGate {
  readonly tenant: string;
  /** A worker process has one gate, so this bounds the process's Updates to its ledger. */
  private readonly inTurn = pLimit(UPDATES_IN_FLIGHT_PER_PROCESS);

  constructor(private readonly options: TemporalBudgetGateOptions) {
    this.tenant = options.tenant;
  }

  /** One Update to the ledger, starting it when it does not run; `updateId` makes a retried RPC count once. */
  private update<Ret, Arg>(update: UpdateDefinition<Ret, [Arg]>, updateId: string, arg: Arg): Promise<Ret> {
    const input: LedgerInput = {
      tenant: this.tenant,
      settings: this.options.settings,
      maxHistoryEvents: LEDGER_MAX_HISTORY_EVENTS,
    };
    // A WithStartWorkflowOperation serves one call only: each try gets its own.
    const startOptions = {
      workflowId: ledgerWorkflowId(this.tenant),
      taskQueue: this.options.taskQueue,
      args: [input] as const,
      workflowIdConflictPolicy: 'USE_EXISTING' as const,
    };
    return this.inTurn(() =>
      admittedInTurn(
        () =>
          this.options.client.workflow.executeUpdateWithStart(update, {
            args: [arg],
            updateId,
            startWorkflowOperation: new WithStartWorkflowOperation<typeof budgetLedger>(
              LEDGER_WORKFLOW_TYPE,
              startOptions,
            ),
          }),
        this.options.burstPatienceMs ?? DEFAULT_BURST_PATIENCE_MS,
      ),
    );
  }

  reserve(endpoint: BudgetedEndpoint, requestId: string): Promise<ReserveResult> {
    // The settings travel with each reservation, so a running ledger learns a changed configuration.
    return this.update(reserveUpdate, requestId, {
      endpoint,
      requestId,
      settings: this.options.settings,
    });
  }

  async release(endpoint: BudgetedEndpoint, requestId: string): Promise<void> {
    await this.update(releaseUpdate, `${requestId}/release`, { endpoint, requestId });
  }

  async reportDailyLimit(report: DailyLimitReport): Promise<string> {
    const answer = await this.update(dailyLimitUpdate, `${report.requestId}/429`, report);
    return answer.blockedUntil;
  }

  async usage(): Promise<LedgerUsage> {
    return (await readLedgerUsage(this.options.client, this.tenant, this.options.settings)).usage;
  }
}

/**
 * A tenant's usage as its ledger counts it. With no ledger yet (or one just
 * closing to continue as new), nothing has been spent through it: full budgets.
 */
export async function readLedgerUsage(
  client: Client,
  tenant: string,
  settings: BudgetSettings,
  nowMs = Date.now(),
): Promise<{ usage: LedgerUsage; ledgerExists: boolean }> {
  try {
    const current = await client.workflow.getHandle(ledgerWorkflowId(tenant)).query(usageQuery);
    return { usage: current, ledgerExists: true };
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    return { usage: usage(createState(settings, nowMs), settings, nowMs), ledgerExists: false };
  }
}
