/**
 * The daily call budgets of one tenant, as an entity workflow (id
 * `ledgerWorkflowId(tenant)`). Activities reserve each call through the
 * `reserve` update (update-with-start); updates run one at a time in the
 * workflow, so the grants of a window never exceed its limit however many
 * workers ask at once. It continues-as-new at each window reset, and earlier
 * when its history grows, always after its handlers have finished.
 *
 * Besides `reserve`: `release` gives back a grant whose call never left,
 * `dailyLimitReached` records the service's own daily 429 and answers how long
 * the endpoint stays blocked, the `exhausted` / `clearExhausted` signals let
 * an operator set or lift a block, and `usage` shows the counts. Behaviour
 * added after runs were recorded sits behind `patched()` markers, so every
 * recorded run replays as it ran.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  defineUpdate,
  log,
  patched,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { LedgerActivities } from './policy/activity-contracts.js';
import {
  CLEAR_EXHAUSTED_SIGNAL,
  type ClearExhaustedSignal,
  DAILY_LIMIT_UPDATE,
  type DailyLimitAnswer,
  type DailyLimitReport,
  EXHAUSTED_SIGNAL,
  type ExhaustedSignal,
  LEDGER_MAX_HISTORY_EVENTS,
  type LedgerInput,
  type LedgerState,
  type LedgerUsage,
  RELEASE_UPDATE,
  RESERVE_UPDATE,
  type ReserveRequest,
  type ReserveResult,
  USAGE_QUERY,
} from './policy/budget-contracts.js';
import {
  clearExhausted,
  clearExhaustedSignalProblem,
  createState,
  dailyLimitReportProblem,
  exhaustedSignalProblem,
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
} from './policy/budget-ledger-state.js';

export const reserveUpdate = defineUpdate<ReserveResult, [ReserveRequest]>(RESERVE_UPDATE);
export const releaseUpdate = defineUpdate<void, [ReserveRequest]>(RELEASE_UPDATE);
export const dailyLimitUpdate = defineUpdate<DailyLimitAnswer, [DailyLimitReport]>(DAILY_LIMIT_UPDATE);
export const exhaustedSignal = defineSignal<[ExhaustedSignal]>(EXHAUSTED_SIGNAL);
export const clearExhaustedSignal = defineSignal<[ClearExhaustedSignal]>(CLEAR_EXHAUSTED_SIGNAL);
export const usageQuery = defineQuery<LedgerUsage>(USAGE_QUERY);

/** What every run started before the threshold travelled in the input used: never change it. */
const LEGACY_MAX_HISTORY_EVENTS = 2_000;
/**
 * Runs with this marker wake when a block ends, so that the `usage` query
 * (answered at the workflow's last-known time) never shows an expired block.
 */
const WAKE_AT_BLOCK_END_PATCH = 'ledger-wakes-at-block-end';

/** Runs with this marker that start without counts take the service's own record of the window first. */
const SEED_FROM_SERVICE_PATCH = 'ledger-seeds-a-fresh-window-from-the-service';

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
  /** What this window's grants follow: the stricter of every setting seen in it. */
  let settings = input.settings;
  /** The most recent caller's settings: the next window's. */
  let latestSettings = input.settings;
  const maxHistoryEvents = input.maxHistoryEvents ?? LEGACY_MAX_HISTORY_EVENTS;
  let state: LedgerState = input.state
    ? rollover(input.state, settings, Date.now())
    : createState(settings, Date.now());
  let blocksChanged = false;
  // Reservations wait until a ledger without counts has read the service's record.
  let seeded = input.state !== undefined || !patched(SEED_FROM_SERVICE_PATCH);
  const whenSeeded = async () => {
    if (!seeded) await condition(() => seeded);
  };

  setHandler(
    reserveUpdate,
    async (request) => {
      await whenSeeded();
      if (request.settings) {
        latestSettings = request.settings;
        settings = stricterSettings(settings, request.settings);
      }
      const next = reserve(state, settings, request, Date.now());
      state = next.state;
      return next.result;
    },
    { validator: validated(reserveRequestProblem) },
  );
  setHandler(
    releaseUpdate,
    async (request) => {
      await whenSeeded();
      state = release(state, settings, request, Date.now());
    },
    { validator: validated(reserveRequestProblem) },
  );
  setHandler(
    dailyLimitUpdate,
    (report) => {
      const next = reportDailyLimit(state, settings, report, Date.now());
      state = next.state;
      blocksChanged = true;
      return { blockedUntil: next.blockedUntil };
    },
    { validator: validated(dailyLimitReportProblem) },
  );
  setHandler(exhaustedSignal, (signal) => {
    const problem = exhaustedSignalProblem(signal);
    if (problem) {
      log.warn(`budget ledger ignored a malformed signal: ${problem}`);
      return;
    }
    state = markExhausted(state, settings, signal, Date.now());
    blocksChanged = true;
  });
  setHandler(clearExhaustedSignal, (signal) => {
    const problem = clearExhaustedSignalProblem(signal);
    if (problem) {
      log.warn(`budget ledger ignored a malformed signal: ${problem}`);
      return;
    }
    state = clearExhausted(state, settings, signal, Date.now());
    blocksChanged = true;
  });
  setHandler(usageQuery, () => usage(state, settings, Date.now()));

  if (!seeded) {
    try {
      const spent = await countWindowSpend({ windowStart: new Date(state.windowStartMs).toISOString() });
      state = seedUsed(state, spent);
    } catch (err) {
      log.warn(`budget ledger could not read the service's record of this window; counting from zero: ${err}`);
    }
    seeded = true;
  }

  const historyFull = () => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > maxHistoryEvents;
  const windowEnd = windowEndMs(state, settings);
  if (patched(WAKE_AT_BLOCK_END_PATCH)) {
    while (!historyFull() && Date.now() < windowEnd) {
      blocksChanged = false;
      const wakeAt = Math.min(windowEnd, nextBlockEndMs(state, Date.now()) ?? windowEnd);
      await condition(() => historyFull() || blocksChanged, Math.max(1, wakeAt - Date.now()));
    }
  } else {
    // Times out at the window's end: the timer to the next reset.
    await condition(historyFull, windowEnd - Date.now());
  }
  await condition(allHandlersFinished);
  // Within the window the stricter settings carry on; a new window follows the latest caller's.
  const nextSettings = Date.now() >= windowEnd ? latestSettings : settings;
  return continueAsNew<typeof budgetLedger>({
    tenant: input.tenant,
    settings: nextSettings,
    state: rollover(state, nextSettings, Date.now()),
    maxHistoryEvents: LEDGER_MAX_HISTORY_EVENTS,
  });
}
