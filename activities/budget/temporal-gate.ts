/**
 * The production BudgetGate: reservations go to the ledger workflow of the
 * worker's tenant as Updates, started on demand (update-with-start), so the
 * count is shared by every worker and serialised in one place. The request id
 * doubles as the Update id, so the server also deduplicates a retried RPC.
 */
import { type Client, WithStartWorkflowOperation, WorkflowNotFoundError } from '@temporalio/client';
import type { Workflow } from '@temporalio/common';
import {
  type BudgetSettings,
  DAILY_LIMIT_UPDATE,
  type DailyLimitAnswer,
  type DailyLimitReport,
  LEDGER_MAX_HISTORY_EVENTS,
  LEDGER_WORKFLOW_TYPE,
  type LedgerInput,
  type LedgerUsage,
  ledgerWorkflowId,
  RELEASE_UPDATE,
  RESERVE_UPDATE,
  type ReserveRequest,
  type ReserveResult,
  USAGE_QUERY,
} from '../../workflows/policy/budget-contracts.js';
import { createState, usage } from '../../workflows/policy/budget-ledger-state.js';
import type { BudgetedEndpoint } from '../../workflows/policy/endpoints.js';
import type { BudgetGate } from './gate.js';

export interface TemporalBudgetGateOptions {
  client: Client;
  /** Where the ledger workflow runs (the worker's main task queue). */
  taskQueue: string;
  /** The tenant of the worker's credential (IMPORT_TENANT). */
  tenant: string;
  settings: BudgetSettings;
}

export class TemporalBudgetGate implements BudgetGate {
  readonly tenant: string;

  constructor(private readonly options: TemporalBudgetGateOptions) {
    this.tenant = options.tenant;
  }

  /** One Update to the ledger, starting it when it does not run; `updateId` makes a retried RPC count once. */
  private update<R>(name: string, updateId: string, arg: ReserveRequest | DailyLimitReport): Promise<R> {
    const input: LedgerInput = {
      tenant: this.tenant,
      settings: this.options.settings,
      maxHistoryEvents: LEDGER_MAX_HISTORY_EVENTS,
    };
    const startWorkflowOperation = new WithStartWorkflowOperation(LEDGER_WORKFLOW_TYPE, {
      workflowId: ledgerWorkflowId(this.tenant),
      taskQueue: this.options.taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    return this.options.client.workflow.executeUpdateWithStart<Workflow, R, [unknown]>(name, {
      args: [arg],
      updateId,
      startWorkflowOperation,
    });
  }

  reserve(endpoint: BudgetedEndpoint, requestId: string): Promise<ReserveResult> {
    // The settings travel with each reservation, so a running ledger learns a changed configuration.
    return this.update<ReserveResult>(RESERVE_UPDATE, requestId, {
      endpoint,
      requestId,
      settings: this.options.settings,
    });
  }

  async release(endpoint: BudgetedEndpoint, requestId: string): Promise<void> {
    await this.update<void>(RELEASE_UPDATE, `${requestId}/release`, { endpoint, requestId });
  }

  async reportDailyLimit(report: DailyLimitReport): Promise<string> {
    const answer = await this.update<DailyLimitAnswer>(DAILY_LIMIT_UPDATE, `${report.requestId}/429`, report);
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
    const current = await client.workflow.getHandle(ledgerWorkflowId(tenant)).query<LedgerUsage>(USAGE_QUERY);
    return { usage: current, ledgerExists: true };
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    return { usage: usage(createState(settings, nowMs), settings, nowMs), ledgerExists: false };
  }
}
