/**
 * A worker process's BudgetGate: it asks the tenant's ledger for allowances
 * (several calls on several endpoints in one Update, counted as used when
 * granted) and grants its activities' calls from them locally, so an import
 * costs the ledger a fraction of an Update per call instead of one each.
 *
 * What rests on what:
 * - Never overspent: every call spent here was counted by the ledger first
 *   (a durable count in its workflow); the process only spends less.
 * - An allowance is spent only within the hold the ledger granted, timed from
 *   before the Update was sent, so never later than the ledger allowed; what
 *   it leaves unspent is given back with the next allowance (the same
 *   Update). A process that dies or freezes gives nothing back: its held
 *   calls stay used, at most the ledger's cap per endpoint (1% of a window),
 *   until the window resets.
 * - The size follows demand: per endpoint, the calls this process spent over
 *   the last hold plus the calls waiting now, so a busy process asks rarely
 *   and an idle one holds little.
 * - Concurrent wants share one Update: a caller that finds nothing left waits
 *   for the allowance on its way before asking for another. A caller may name
 *   the calls it makes next (the upload after its status read): they join
 *   the same Update.
 * - A ledger from before allowances refuses the Update as unknown: the gate
 *   then reserves call by call, as such a ledger expects, for one hold.
 */
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type {
  AllowanceRequest,
  AllowanceResult,
  AllowanceSettlement,
  DailyLimitReport,
  LedgerUsage,
  ReserveResult,
} from '../../workflows/contracts/budget.js';
import type { BudgetedEndpoint } from '../../workflows/contracts/endpoints.js';
import type { BudgetGate, ExpectedCalls } from './gate.js';

/** The ledger as the allowance gate reaches it (TemporalBudgetGate: one Update each). */
export interface LedgerClient extends BudgetGate {
  reserveAllowance(request: AllowanceRequest): Promise<AllowanceResult>;
}

export interface AllowanceGateOptions {
  /** How long an allowance is meant to be held (the ledger may shorten it). Default 10 min. */
  holdMs?: number;
  now?: () => number;
}

type Counts = Partial<Record<BudgetedEndpoint, number>>;

interface Allowance {
  id: string;
  /** Local instant after which nothing more is spent from it. */
  deadlineMs: number;
  left: Counts;
  /** What the ledger's window had left besides this allowance, per endpoint. */
  ledgerRemaining: Counts;
}

export const DEFAULT_ALLOWANCE_HOLD_MS = 10 * 60_000;
/** A caller finding nothing left asks again at most this often before reserving its call alone. */
const MAX_REFILLS_PER_CALL = 20;
/** The ledger takes this many settlements per Update; more wait for the next. */
const MAX_SETTLEMENTS_PER_UPDATE = 64;

export class AllowanceGate implements BudgetGate {
  readonly tenant: string;
  private readonly holdMs: number;
  private readonly now: () => number;
  private allowances: Allowance[] = [];
  /** requestId -> the allowance its call was taken from (until that allowance is settled). */
  private readonly taken = new Map<string, Allowance>();
  /** Calls reserved one by one with a ledger that knows no allowances. */
  private readonly reservedAlone = new Set<string>();
  /** Ended allowances whose unspent calls the ledger has not taken back yet. */
  private unsettled: AllowanceSettlement[] = [];
  /** When each call was taken, per endpoint, over the last hold: the demand the next allowance follows. */
  private readonly takenAt = new Map<BudgetedEndpoint, number[]>();
  private readonly waiting = new Map<BudgetedEndpoint, number>();
  /** Calls the waiting callers expect to make next (`alongWith`): asked for in the same Update. */
  private readonly expected = new Map<BudgetedEndpoint, number>();
  private refill: Promise<AllowanceResult['refused']> | undefined;
  private aloneUntilMs = 0;

  constructor(
    private readonly ledger: LedgerClient,
    options: AllowanceGateOptions = {},
  ) {
    this.tenant = ledger.tenant;
    this.holdMs = options.holdMs ?? DEFAULT_ALLOWANCE_HOLD_MS;
    this.now = options.now ?? Date.now;
  }

  async reserve(endpoint: BudgetedEndpoint, requestId: string, alongWith: ExpectedCalls = {}): Promise<ReserveResult> {
    for (let round = 0; round < MAX_REFILLS_PER_CALL && this.now() >= this.aloneUntilMs; round++) {
      const granted = this.take(endpoint, requestId);
      if (granted) return granted;
      let refusedUntil: string | undefined;
      try {
        refusedUntil = await this.refillFor(endpoint, alongWith);
      } catch (err) {
        if (!ledgerKnowsNoAllowances(err)) throw err;
        this.aloneUntilMs = this.now() + this.holdMs;
      }
      if (refusedUntil !== undefined) return { granted: false, resetsAt: refusedUntil };
    }
    // Others kept taking what came (or the ledger is older): this call asks for itself.
    this.reservedAlone.add(requestId);
    return this.ledger.reserve(endpoint, requestId);
  }

  async release(endpoint: BudgetedEndpoint, requestId: string): Promise<void> {
    if (this.reservedAlone.delete(requestId)) return this.ledger.release(endpoint, requestId);
    const from = this.taken.get(requestId);
    this.taken.delete(requestId);
    // Still held here: the call goes back into it (settled with it when it ended meanwhile).
    if (from && this.allowances.includes(from)) from.left[endpoint] = (from.left[endpoint] ?? 0) + 1;
  }

  async reportDailyLimit(report: DailyLimitReport): Promise<string> {
    // The service refuses this endpoint now: what is held for it goes back with the next allowance.
    for (const allowance of this.allowances) {
      if ((allowance.left[report.endpoint] ?? 0) > 0) allowance.deadlineMs = this.now();
    }
    this.reservedAlone.delete(report.requestId);
    return this.ledger.reportDailyLimit(report);
  }

  usage(): Promise<LedgerUsage> {
    return this.ledger.usage();
  }

  private take(endpoint: BudgetedEndpoint, requestId: string): ReserveResult | undefined {
    const now = this.now();
    const from = this.allowances.find((a) => a.deadlineMs > now && (a.left[endpoint] ?? 0) > 0);
    if (!from) return undefined;
    const left = (from.left[endpoint] ?? 0) - 1;
    from.left[endpoint] = left;
    this.taken.set(requestId, from);
    this.takenAt.set(endpoint, [...this.recentTakes(endpoint, now), now]);
    return { granted: true, remaining: (from.ledgerRemaining[endpoint] ?? 0) + left };
  }

  private recentTakes(endpoint: BudgetedEndpoint, now: number): number[] {
    return (this.takenAt.get(endpoint) ?? []).filter((at) => at > now - this.holdMs);
  }

  /** Waits for an allowance with a call on `endpoint`: the one on its way, else a new one. Returns a refusal's instant. */
  private async refillFor(endpoint: BudgetedEndpoint, alongWith: ExpectedCalls): Promise<string | undefined> {
    this.waiting.set(endpoint, (this.waiting.get(endpoint) ?? 0) + 1);
    this.countExpected(alongWith, 1);
    try {
      while (this.refill) {
        const refused = await this.refill;
        if (refused[endpoint] !== undefined) return refused[endpoint];
        if (this.hasLeft(endpoint)) return undefined;
      }
      const refill = this.askLedger();
      this.refill = refill;
      try {
        return (await refill)[endpoint];
      } finally {
        if (this.refill === refill) this.refill = undefined;
      }
    } finally {
      this.waiting.set(endpoint, (this.waiting.get(endpoint) ?? 1) - 1);
      this.countExpected(alongWith, -1);
    }
  }

  private countExpected(calls: ExpectedCalls, sign: 1 | -1): void {
    for (const [endpoint, n] of Object.entries(calls) as [BudgetedEndpoint, number][]) {
      this.expected.set(endpoint, Math.max(0, (this.expected.get(endpoint) ?? 0) + sign * n));
    }
  }

  private hasLeft(endpoint: BudgetedEndpoint): boolean {
    const now = this.now();
    return this.allowances.some((a) => a.deadlineMs > now && (a.left[endpoint] ?? 0) > 0);
  }

  /** One Update: calls for every endpoint wanted now or spent lately and not held, and the ended allowances settled. */
  private async askLedger(): Promise<AllowanceResult['refused']> {
    // Calls wanted in the same turn of the event loop join this Update.
    await new Promise((resolve) => setImmediate(resolve));
    const sentAt = this.now();
    this.endAllowances(sentAt);
    const calls: Counts = {};
    const endpoints = new Set([...this.waiting.keys(), ...this.expected.keys(), ...this.takenAt.keys()]);
    for (const endpoint of endpoints) {
      if (this.hasLeft(endpoint)) continue;
      const wanted =
        (this.waiting.get(endpoint) ?? 0) +
        (this.expected.get(endpoint) ?? 0) +
        this.recentTakes(endpoint, sentAt).length;
      if (wanted > 0) calls[endpoint] = wanted;
    }
    const settle = this.unsettled.slice(0, MAX_SETTLEMENTS_PER_UPDATE);
    const requestId = `allowance-${randomUUID()}`;
    const answer = await this.ledger.reserveAllowance({ requestId, calls, holdMs: this.holdMs, settle });
    // Settled now; a settlement sent again (this Update failed after the ledger took it) is ignored there.
    this.unsettled = this.unsettled.filter((s) => !settle.includes(s));
    if (Object.keys(answer.granted).length > 0) {
      this.allowances.push({
        id: requestId,
        deadlineMs: sentAt + answer.validForMs,
        left: { ...answer.granted },
        ledgerRemaining: answer.remaining,
      });
    }
    return answer.refused;
  }

  /** Allowances past their hold or spent to the last call end here, to be settled with the next Update. */
  private endAllowances(now: number): void {
    const ended = this.allowances.filter((a) => a.deadlineMs <= now || Object.values(a.left).every((n) => !n));
    if (ended.length === 0) return;
    this.allowances = this.allowances.filter((a) => !ended.includes(a));
    for (const allowance of ended) {
      const unspent = Object.fromEntries(Object.entries(allowance.left).filter(([, n]) => (n ?? 0) > 0));
      this.unsettled.push({ allowanceId: allowance.id, unspent });
    }
    for (const [requestId, from] of this.taken) if (ended.includes(from)) this.taken.delete(requestId);
  }
}

/** The refusal of a ledger that has no handler for allowances (a release before them). */
function ledgerKnowsNoAllowances(err: unknown): boolean {
  return (
    err instanceof ApplicationFailure &&
    err.type === 'UpdateRefused' &&
    /No registered handler for update/.test(err.message)
  );
}
