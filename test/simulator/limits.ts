/**
 * Per-endpoint daily request counters for the budgeted import endpoints.
 *
 * A request counts once it reaches the service logic: after authentication
 * and permission checks (a 401/403 is assumed not to count, since the service
 * cannot attribute it to a tenant) and before the request is validated (so a
 * 400 or 404 answer counts). Injected `failNext` answers never count.
 *
 * Over the limit the answer is 429 with the spec's error object and
 * errorCode `429-101`. The production errorCode for the import daily limits is
 * unpublished; 429-101 is the spec's code for a daily/rolling quota, so the
 * simulator uses it and the client must not depend on it.
 */

import { loadBudgetSettings } from '../../temporal.config.js';
import { windowStartMs } from '../../workflows/budget-window.js';
import {
  BUDGETED_ENDPOINT_NAMES,
  BUDGETED_ENDPOINTS,
  type BudgetedEndpoint,
  isBudgetedEndpoint,
  type ServiceEndpoint,
} from '../../workflows/contracts/endpoints.js';
import { specError } from './error-bodies.js';
import type { Reply } from './http-io.js';

export class DailyLimits {
  private readonly limits: Record<BudgetedEndpoint, number>;
  private counts = new Map<BudgetedEndpoint, number>();
  private currentWindow: number | undefined;
  /** Calls refused for a spent limit, over the simulator's life (not reset with the window). */
  private readonly refusals = new Map<BudgetedEndpoint, number>();

  constructor(
    overrides: Partial<Record<BudgetedEndpoint, number>>,
    private readonly resetMinuteUtc: number,
    private readonly now: () => number,
  ) {
    // The worker's default limits are the spec's published ones, so they stand for the service's.
    const published = loadBudgetSettings({}).limits;
    this.limits = Object.fromEntries(
      BUDGETED_ENDPOINT_NAMES.map((name) => [name, overrides[name] ?? published[name]]),
    ) as Record<BudgetedEndpoint, number>;
  }

  /** Counts the call, or answers 429 when the endpoint's limit for this window is spent. */
  take(endpoint: ServiceEndpoint): Reply | undefined {
    if (!isBudgetedEndpoint(endpoint)) return undefined;
    this.rollWindow();
    const used = this.counts.get(endpoint) ?? 0;
    const limit = this.limits[endpoint];
    if (used >= limit) {
      this.refusals.set(endpoint, (this.refusals.get(endpoint) ?? 0) + 1);
      const { method, path } = BUDGETED_ENDPOINTS[endpoint];
      return specError(429, '429-101', `Daily request limit of ${limit} reached for ${method} ${path}`);
    }
    this.counts.set(endpoint, used + 1);
    return undefined;
  }

  counters(): Record<BudgetedEndpoint, number> {
    this.rollWindow();
    return Object.fromEntries(BUDGETED_ENDPOINT_NAMES.map((name) => [name, this.counts.get(name) ?? 0])) as Record<
      BudgetedEndpoint,
      number
    >;
  }

  refused(): Record<string, number> {
    return Object.fromEntries(this.refusals);
  }

  reset(): void {
    this.counts.clear();
  }

  private rollWindow(): void {
    const start = windowStartMs(this.now(), this.resetMinuteUtc);
    if (start !== this.currentWindow) {
      this.currentWindow = start;
      this.counts.clear();
    }
  }
}
