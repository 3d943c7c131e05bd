/**
 * The tenant's ledger workflow as a BudgetGate: every reservation is an
 * Update (activities/entity-updates), the ledger started on demand, so the
 * count is shared by every worker and serialised in one place. The request
 * id doubles as the Update id, so a resent reservation counts once. A worker
 * process reaches it through an AllowanceGate, which asks for several calls
 * at a time (`reserveAllowance`).
 */
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import { createState, usage } from '../../workflows/budget-ledger-state.js';
import {
  type AllowanceRequest,
  type AllowanceResult,
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
import {
  allowanceUpdate,
  dailyLimitUpdate,
  releaseUpdate,
  reserveUpdate,
  usageQuery,
} from '../../workflows/contracts/messages.js';
import { EntityUpdates } from '../entity-updates/client.js';
import { updateId } from '../entity-updates/update-id.js';
import type { LedgerClient } from './allowance-gate.js';

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

export class TemporalBudgetGate implements LedgerClient {
  readonly tenant: string;
  /** A worker process has one gate, so its Updates to the ledger take turns. */
  private readonly updates: EntityUpdates;

  constructor(private readonly options: TemporalBudgetGateOptions) {
    this.tenant = options.tenant;
    this.updates = new EntityUpdates(options.client, { patienceMs: options.burstPatienceMs });
  }

  /** One Update to the ledger, starting it when it does not run. */
  private update<Ret, Arg>(update: UpdateDefinition<Ret, [Arg]>, id: string, arg: Arg): Promise<Ret> {
    const input: LedgerInput = {
      tenant: this.tenant,
      settings: this.options.settings,
      maxHistoryEvents: LEDGER_MAX_HISTORY_EVENTS,
    };
    return this.updates.execute({
      update,
      arg,
      updateId: id,
      workflowType: LEDGER_WORKFLOW_TYPE,
      start: {
        workflowId: ledgerWorkflowId(this.tenant),
        taskQueue: this.options.taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
      },
    });
  }

  reserve(endpoint: BudgetedEndpoint, requestId: string): Promise<ReserveResult> {
    // The settings travel with each reservation, so a running ledger learns a changed configuration.
    return this.update(reserveUpdate, updateId(requestId), {
      endpoint,
      requestId,
      settings: this.options.settings,
    });
  }

  reserveAllowance(request: AllowanceRequest): Promise<AllowanceResult> {
    return this.update(allowanceUpdate, updateId(request.requestId), { ...request, settings: this.options.settings });
  }

  async release(endpoint: BudgetedEndpoint, requestId: string): Promise<void> {
    await this.update(releaseUpdate, updateId(requestId, 'release'), { endpoint, requestId });
  }

  async reportDailyLimit(report: DailyLimitReport): Promise<string> {
    const answer = await this.update(dailyLimitUpdate, updateId(report.requestId, '429'), report);
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
