/**
 * The production BudgetGate: reservations go to the tenant's budgetLedger
 * workflow as Updates, started on demand (update-with-start), so the count is
 * shared by every worker and serialised in one place. The request id doubles
 * as the Update id, so the server also deduplicates a retried RPC.
 */
import { type Client, WithStartWorkflowOperation, WorkflowNotFoundError } from '@temporalio/client';
import type { Workflow } from '@temporalio/common';
import {
  type BudgetSettings,
  EXHAUSTED_SIGNAL,
  LEDGER_WORKFLOW_TYPE,
  type LedgerInput,
  type LedgerUsage,
  ledgerWorkflowId,
  RESERVE_UPDATE,
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
  settings: BudgetSettings;
}

export class TemporalBudgetGate implements BudgetGate {
  constructor(private readonly options: TemporalBudgetGateOptions) {}

  private startOptions(tenant: string) {
    const input: LedgerInput = { tenant, settings: this.options.settings };
    return {
      workflowId: ledgerWorkflowId(tenant),
      taskQueue: this.options.taskQueue,
      args: [input],
    };
  }

  async reserve(tenant: string, endpoint: BudgetedEndpoint, requestId: string): Promise<ReserveResult> {
    const startWorkflowOperation = new WithStartWorkflowOperation(LEDGER_WORKFLOW_TYPE, {
      ...this.startOptions(tenant),
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    return this.options.client.workflow.executeUpdateWithStart<Workflow, ReserveResult, [unknown]>(RESERVE_UPDATE, {
      args: [{ endpoint, requestId }],
      updateId: requestId,
      startWorkflowOperation,
    });
  }

  async reportExhausted(tenant: string, endpoint: BudgetedEndpoint, untilIso: string): Promise<void> {
    await this.options.client.workflow.signalWithStart(LEDGER_WORKFLOW_TYPE, {
      ...this.startOptions(tenant),
      signal: EXHAUSTED_SIGNAL,
      signalArgs: [{ endpoint, until: untilIso }],
    });
  }

  async usage(tenant: string): Promise<LedgerUsage> {
    return (await readLedgerUsage(this.options.client, tenant, this.options.settings)).usage;
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
