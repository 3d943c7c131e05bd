/**
 * The daily call budgets of one tenant, as an entity workflow (id
 * `ledgerWorkflowId(tenant)`). Activities reserve each call through the
 * `reserve` update (update-with-start); updates run one at a time in the
 * workflow, so the grants of a window never exceed its limit however many
 * workers ask at once. It continues-as-new at each window reset, and earlier
 * when its history grows, always after its handlers have finished.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  defineUpdate,
  log,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  EXHAUSTED_SIGNAL,
  type ExhaustedSignal,
  type LedgerInput,
  type LedgerUsage,
  RESERVE_UPDATE,
  type ReserveRequest,
  type ReserveResult,
  USAGE_QUERY,
} from './policy/budget-contracts.js';
import {
  createState,
  exhaustedSignalProblem,
  markExhausted,
  reserve,
  reserveRequestProblem,
  rollover,
  usage,
  windowEndMs,
} from './policy/budget-ledger-state.js';

export const reserveUpdate = defineUpdate<ReserveResult, [ReserveRequest]>(RESERVE_UPDATE);
export const exhaustedSignal = defineSignal<[ExhaustedSignal]>(EXHAUSTED_SIGNAL);
export const usageQuery = defineQuery<LedgerUsage>(USAGE_QUERY);

/** Well below the server's 50k-event warning; the carried state is small, so a fresh run is cheap. */
export const LEDGER_MAX_HISTORY_EVENTS = 2_000;

export async function budgetLedger(input: LedgerInput): Promise<never> {
  const { settings } = input;
  let state = input.state ? rollover(input.state, settings, Date.now()) : createState(settings, Date.now());

  setHandler(
    reserveUpdate,
    (request) => {
      const next = reserve(state, settings, request, Date.now());
      state = next.state;
      return next.result;
    },
    {
      validator: (request) => {
        const problem = reserveRequestProblem(request);
        if (problem) throw new Error(problem);
      },
    },
  );
  setHandler(exhaustedSignal, (signal) => {
    const problem = exhaustedSignalProblem(signal);
    if (problem) {
      log.warn(`budget ledger ignored a malformed signal: ${problem}`);
      return;
    }
    state = markExhausted(state, settings, signal, Date.now());
  });
  setHandler(usageQuery, () => usage(state, settings, Date.now()));

  const historyFull = () =>
    workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > LEDGER_MAX_HISTORY_EVENTS;
  // Times out at the window's end: the timer to the next reset.
  await condition(historyFull, windowEndMs(state, settings) - Date.now());
  await condition(allHandlersFinished);
  return continueAsNew<typeof budgetLedger>({
    tenant: input.tenant,
    settings,
    state: rollover(state, settings, Date.now()),
  });
}
