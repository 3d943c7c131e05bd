/** `import-worker budget [--tenant]`: the tenant's daily budgets as the ledger counts them. */
import { WorkflowNotFoundError } from '@temporalio/client';
import { type LedgerUsage, ledgerWorkflowId, USAGE_QUERY } from '../../workflows/policy/budget-contracts.js';
import { createState, usage } from '../../workflows/policy/budget-ledger-state.js';
import { TENANT_PATTERN } from '../../workflows/policy/import-input.js';
import { CliError } from './cli-error.js';
import { type CliContext, withClient } from './context.js';
import { formatTable } from './table.js';

export function budgetTable(usageByEndpoint: LedgerUsage): string[] {
  const rows = Object.entries(usageByEndpoint).map(([endpoint, u]) => [
    endpoint,
    String(u.used),
    String(u.limit),
    String(u.remaining),
    u.resetsAt,
    u.exhaustedUntil ? `service refuses until ${u.exhaustedUntil}` : '',
  ]);
  return formatTable(['endpoint', 'used', 'limit', 'remaining', 'resets at (UTC)', 'note'], rows);
}

export async function budgetCommand(options: { tenant?: string }, ctx: CliContext): Promise<void> {
  const config = ctx.config();
  const tenant = options.tenant ?? config.tenant;
  if (!TENANT_PATTERN.test(tenant)) {
    throw new CliError(`--tenant must be 1-64 letters, digits, ".", "_" or "-"; got ${JSON.stringify(tenant)}`);
  }
  await withClient(ctx, config, async ({ client }) => {
    let current: LedgerUsage;
    try {
      current = await client.workflow.getHandle(ledgerWorkflowId(tenant)).query<LedgerUsage>(USAGE_QUERY);
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      // No call has been counted for this tenant yet: every budget is whole.
      const nowMs = ctx.now().getTime();
      current = usage(createState(config.budget, nowMs), config.budget, nowMs);
      ctx.warn(`no budget ledger for tenant ${tenant} yet (no import has called the service): showing full budgets`);
    }
    ctx.print(`tenant ${tenant}`);
    for (const line of budgetTable(current)) ctx.print(line);
  });
}
