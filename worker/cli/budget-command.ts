/**
 * `import-worker budget [--tenant] [--json]`: the tenant's daily budgets as
 * the ledger counts them, and the guard band before the reset when it holds
 * (no call is granted then, budget left or not). Calls granted to worker
 * processes' allowances count as used; the note says how many of them the
 * processes have not settled yet (spent or still held).
 */
import { readLedgerUsage } from '../../activities/budget/temporal-gate.js';
import { loadBudgetSettings, loadClientConfig } from '../../temporal.config.js';
import type { LedgerUsage } from '../../workflows/contracts/budget.js';
import { TENANT_PATTERN } from '../../workflows/contracts/import-input.js';
import { UsageError } from './cli-error.js';
import { type CliContext, withClient } from './context.js';
import { type GuardBand, guardBandAt, guardBandText } from './guard-band.js';
import { formatTable } from './table.js';

function budgetTable(usageByEndpoint: LedgerUsage, band: GuardBand | undefined): string[] {
  const rows = Object.entries(usageByEndpoint).map(([endpoint, u]) => [
    endpoint,
    String(u.used),
    String(u.limit),
    String(u.remaining),
    u.resetsAt,
    [
      u.exhaustedUntil
        ? `service refuses until ${u.exhaustedUntil}`
        : band && u.remaining > 0
          ? 'none granted until the reset (guard band)'
          : '',
      u.held ? `${u.held} of used held by worker processes` : '',
    ]
      .filter(Boolean)
      .join('; '),
  ]);
  return formatTable(['endpoint', 'used', 'limit', 'remaining', 'resets at (UTC)', 'note'], rows);
}

export async function budgetCommand(options: { tenant?: string; json?: boolean }, ctx: CliContext): Promise<void> {
  const config = loadClientConfig(ctx.env);
  const tenant = options.tenant ?? config.tenant;
  if (!TENANT_PATTERN.test(tenant)) {
    throw new UsageError(`--tenant must be 1-64 letters, digits, ".", "_" or "-"; got ${JSON.stringify(tenant)}`);
  }
  const budget = loadBudgetSettings(ctx.env);
  const nowMs = ctx.now().getTime();
  const { usage, ledgerExists } = await withClient(ctx, config.temporal, ({ client }) =>
    readLedgerUsage(client, tenant, budget, nowMs),
  );
  const resetsAt = Object.values(usage)[0]?.resetsAt;
  const band = resetsAt === undefined ? undefined : guardBandAt(resetsAt, nowMs);
  if (options.json) {
    ctx.print(JSON.stringify({ tenant, ledgerExists, guardBand: band ?? null, endpoints: usage }, null, 2));
    return;
  }
  if (!ledgerExists) {
    ctx.warn(`no budget ledger for tenant ${tenant} yet (no import has called the service): showing full budgets`);
  }
  ctx.print(`tenant ${tenant}`);
  for (const line of budgetTable(usage, band)) ctx.print(line);
  if (band) ctx.print(`guard band from ${band.from}: ${guardBandText(band)}`);
}
