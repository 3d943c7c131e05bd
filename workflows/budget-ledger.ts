/**
 * The daily call budgets of one tenant, as an entity workflow (id
 * `ledgerWorkflowId(tenant)`). Activities reserve each call through the
 * `reserve` update (update-with-start); updates run one at a time in the
 * workflow, so the grants of a window never exceed its limit however many
 * workers ask at once. It continues-as-new at each window reset, and earlier
 * when its history grows, always after its handlers have finished.
 *
 * Besides `reserve`: `reserveAllowance` grants a worker process several calls
 * at once (its holder spends them without asking again, and gives back what
 * it left unspent with its next allowance), `release` gives back a grant whose call never left,
 * `dailyLimitReached` records the service's own daily 429 and answers how long
 * the endpoint stays blocked, the `exhausted` / `clearExhausted` signals let
 * an operator set or lift a block, and `usage` shows the counts. It wakes
 * when a block ends, so `usage` (answered at the workflow's last-known time)
 * never shows an expired block; a run that starts without counts takes the
 * service's own record of the window first.
 *
 * Under Worker Versioning it is pinned, and ends its run early to continue
 * as new on a release that became current (see versioning.ts).
 */
import { allHandlersFinished, condition, log, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  allowanceRequestProblem,
  clearExhausted,
  clearExhaustedSignalProblem,
  createState,
  dailyLimitReportProblem,
  exhaustedSignalProblem,
  grantAllowance,
  markExhausted,
  nextBlockEndMs,
  release,
  reportDailyLimit,
  reserve,
  reserveRequestProblem,
  rollover,
  seedUsed,
  stricterSettings,
  usage,
  windowEndMs,
} from './budget-ledger-state.js';
import type { LedgerActivities, WindowSpend } from './contracts/activities.js';
import {
  type AllowanceRequest,
  type AllowanceResult,
  type BudgetSettings,
  type ClearExhaustedSignal,
  type DailyLimitAnswer,
  type DailyLimitReport,
  type ExhaustedSignal,
  LEDGER_MAX_HISTORY_EVENTS,
  type LedgerInput,
  type LedgerState,
  type ReserveRequest,
  type ReserveResult,
} from './contracts/budget.js';
import {
  allowanceUpdate,
  clearExhaustedSignal,
  dailyLimitUpdate,
  exhaustedSignal,
  releaseUpdate,
  reserveUpdate,
  usageQuery,
} from './contracts/messages.js';
import { continueAsNewOnCurrentVersion, newVersionIsCurrent } from './versioning.js';

const { countWindowSpend } = proxyActivities<LedgerActivities>({
  startToCloseTimeout: '5m',
  // A few tries: a ledger that cannot read the record starts from zero rather than grant nothing.
  retry: { initialInterval: '1s', maximumAttempts: 4 },
});

function validated(problemOf: (arg: unknown) => string | undefined) {
  return (arg: unknown) => {
    const problem = problemOf(arg);
    if (problem) throw new Error(problem);
  };
}

export async function budgetLedger(input: LedgerInput): Promise<never> {
  const ledger = new LedgerRun(input);
  ledger.answerMessages();

  if (!ledger.seeded) {
    try {
      const spent = await countWindowSpend({ windowStart: ledger.windowStartIso(), createLimit: ledger.createLimit() });
      if (spent.partial)
        log.warn("budget ledger read only part of the service's record of this window; it may count short");
      ledger.seed(spent);
    } catch (err) {
      log.warn(`budget ledger could not read the service's record of this window; counting from zero: ${err}`);
    }
    ledger.seeded = true;
  }

  const windowEnd = ledger.windowEndMs();
  while (!ledger.runIsOver() && Date.now() < windowEnd) await ledger.untilBlocksChange(windowEnd);
  await condition(allHandlersFinished);
  return continueAsNewOnCurrentVersion<typeof budgetLedger>(ledger.nextRunInput(windowEnd));
}

/** One ledger run's counts and the settings they follow; each handler changes them as one step. */
class LedgerRun {
  /** What this window's grants follow: the stricter of every setting seen in it. */
  private settings: BudgetSettings;
  /** The most recent caller's settings: the next window's. */
  private latestSettings: BudgetSettings;
  private readonly maxHistoryEvents: number;
  private state: LedgerState;
  private blocksChanged = false;
  /** Reservations wait until a ledger without counts has read the service's record. */
  seeded: boolean;

  constructor(private readonly input: LedgerInput) {
    this.settings = input.settings;
    this.latestSettings = input.settings;
    this.maxHistoryEvents = input.maxHistoryEvents ?? LEDGER_MAX_HISTORY_EVENTS;
    this.state = input.state
      ? rollover(input.state, this.settings, Date.now())
      : createState(this.settings, Date.now());
    this.seeded = input.state !== undefined;
  }

  answerMessages(): void {
    setHandler(reserveUpdate, (request) => this.reserve(request), { validator: validated(reserveRequestProblem) });
    setHandler(allowanceUpdate, (request) => this.grantAllowance(request), {
      validator: validated(allowanceRequestProblem),
    });
    setHandler(releaseUpdate, (request) => this.release(request), { validator: validated(reserveRequestProblem) });
    setHandler(dailyLimitUpdate, (report) => this.reportDailyLimit(report), {
      validator: validated(dailyLimitReportProblem),
    });
    setHandler(exhaustedSignal, (signal) => this.markExhausted(signal));
    setHandler(clearExhaustedSignal, (signal) => this.clearExhausted(signal));
    setHandler(usageQuery, () => usage(this.state, this.settings, Date.now()));
  }

  private async whenSeeded(): Promise<void> {
    if (!this.seeded) await condition(() => this.seeded);
  }

  private async reserve(request: ReserveRequest): Promise<ReserveResult> {
    await this.whenSeeded();
    if (request.settings) {
      this.latestSettings = request.settings;
      this.settings = stricterSettings(this.settings, request.settings);
    }
    const next = reserve(this.state, this.settings, request, Date.now());
    this.state = next.state;
    return next.result;
  }

  private async grantAllowance(request: AllowanceRequest): Promise<AllowanceResult> {
    await this.whenSeeded();
    if (request.settings) {
      this.latestSettings = request.settings;
      this.settings = stricterSettings(this.settings, request.settings);
    }
    const next = grantAllowance(this.state, this.settings, request, Date.now());
    this.state = next.state;
    return next.result;
  }

  private async release(request: ReserveRequest): Promise<void> {
    await this.whenSeeded();
    this.state = release(this.state, this.settings, request, Date.now());
  }

  private reportDailyLimit(report: DailyLimitReport): DailyLimitAnswer {
    const next = reportDailyLimit(this.state, this.settings, report, Date.now());
    this.state = next.state;
    this.blocksChanged = true;
    return { blockedUntil: next.blockedUntil };
  }

  private markExhausted(signal: ExhaustedSignal): void {
    const problem = exhaustedSignalProblem(signal);
    if (problem) {
      log.warn(`budget ledger ignored a malformed signal: ${problem}`);
      return;
    }
    this.state = markExhausted(this.state, this.settings, signal, Date.now());
    this.blocksChanged = true;
  }

  private clearExhausted(signal: ClearExhaustedSignal): void {
    const problem = clearExhaustedSignalProblem(signal);
    if (problem) {
      log.warn(`budget ledger ignored a malformed signal: ${problem}`);
      return;
    }
    this.state = clearExhausted(this.state, this.settings, signal, Date.now());
    this.blocksChanged = true;
  }

  createLimit(): number {
    return this.settings.limits.createJob;
  }

  windowStartIso(): string {
    return new Date(this.state.windowStartMs).toISOString();
  }

  seed(spent: WindowSpend): void {
    const { createJob, submitData, listJobs } = spent;
    this.state = seedUsed(this.state, { createJob, submitData, listJobs });
  }

  windowEndMs(): number {
    return windowEndMs(this.state, this.settings);
  }

  /** The run ends before its window does when its history is full or another release became current. */
  readonly runIsOver = (): boolean =>
    workflowInfo().continueAsNewSuggested ||
    workflowInfo().historyLength > this.maxHistoryEvents ||
    newVersionIsCurrent();

  /** Resolves when the history is full, a block was set or cleared, or the next block ends (the window's end at the latest). */
  untilBlocksChange(windowEnd: number): Promise<boolean> {
    this.blocksChanged = false;
    const wakeAt = Math.min(windowEnd, nextBlockEndMs(this.state, Date.now()) ?? windowEnd);
    return condition(() => this.runIsOver() || this.blocksChanged, Math.max(1, wakeAt - Date.now()));
  }

  /** Within the window the stricter settings carry on; a new window follows the latest caller's. */
  nextRunInput(windowEnd: number): LedgerInput {
    const nextSettings = Date.now() >= windowEnd ? this.latestSettings : this.settings;
    return {
      tenant: this.input.tenant,
      settings: nextSettings,
      state: rollover(this.state, nextSettings, Date.now()),
      maxHistoryEvents: LEDGER_MAX_HISTORY_EVENTS,
    };
  }
}
