/** `import-worker budget [--tenant]`: the tenant's daily budgets as the ledger counts them. */
import { readLedgerUsage } from '../../activities/budget/temporal-gate.js';
import { loadBudgetSettings, loadClientConfig } from '../../temporal.config.js';
import type { LedgerUsage } from '../../workflows/contracts/budget.js';
import { TENANT_PATTERN } from '../../workflows/contracts/import-input.js';
import { UsageError } from './cli-error.js';
import { type CliContext, withClient } from './context.js';
import { formatTable } from './table.js';

function budgetTable(usageByEndpoint: LedgerUsage): string[] {
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
  const config = loadClientConfig(ctx.env);
  const tenant = options.tenant ?? config.tenant;
  if (!TENANT_PATTERN.test(tenant)) {
    throw new UsageError(`--tenant must be 1-64 letters, digits, ".", "_" or "-"; got ${JSON.stringify(tenant)}`);
  }
  const budget = loadBudgetSettings(ctx.env);
  await withClient(ctx, config.temporal, async ({ client }) => {
    const { usage: current, ledgerExists } = await readLedgerUsage(client, tenant, budget, ctx.now().getTime());
    if (!ledgerExists) {
      ctx.warn(`no budget ledger for tenant ${tenant} yet (no import has called the service): showing full budgets`);
    }
    ctx.print(`tenant ${tenant}`);
    for (const line of budgetTable(current)) ctx.print(line);
  });
}
