/**
 * The budget ledger replayed against histories built for what a recording
 * would make too big a fixture: runs that reach their own 1,500- or
 * 2,000-event bound. Each is a run continued within its window (it carries
 * the window's counts, so it reads nothing from the service first).
 * Everything else about the ledger (including the server's continue-as-new
 * suggestion) replays from recorded histories
 * (recorded-histories.replay.test.ts). The builder copies a recorded ledger
 * run: update-with-start in the first task, the SDK's flags, one update id per
 * request. Each replay is also compared with the history (update results,
 * timer durations, continue-as-new input), not only its commands' order.
 */
import { DeterminismViolationError } from '@temporalio/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadBudgetSettings } from '../../temporal.config.js';
import {
  type BudgetSettings,
  LEDGER_MAX_HISTORY_EVENTS,
  type LedgerInput,
  type LedgerState,
  type ReserveResult,
} from '../../workflows/contracts/budget.js';
import { reserveUpdate } from '../../workflows/contracts/messages.js';
import { type History, HistoryBuilder } from './history-builder.js';
import { asHistoryHoldsIt, bundleForReplay, recordOfHistory, replay } from './replay.js';

let code: string;

beforeAll(async () => {
  code = await bundleForReplay();
}, 60_000);

const WORKFLOW_ID = 'budget-ledger-acme';
const settings: BudgetSettings = {
  limits: loadBudgetSettings({}).limits,
  headroomPercent: 10,
  resetMinuteUtc: 0,
};
const state = (s: Partial<LedgerState>): LedgerState => ({
  windowStartMs: WINDOW_START_MS,
  used: {},
  exhaustedUntil: {},
  answered: {},
  ...s,
});
const START = '2026-01-01T10:00:00Z';
const WINDOW_START_MS = Date.parse('2026-01-01T00:00:00Z');
const MIDNIGHT_MS = Date.parse('2026-01-02T00:00:00Z');
/** jobStatus: 3,600 a day less 10 % headroom. */
const JOB_STATUS_LIMIT = 3240;
const input: LedgerInput = { tenant: 'acme', settings, state: state({}) };

/** Replays `history` and checks that the code did what it records; returns what the code did. */
async function replayBuilt(history: History) {
  const done = await replay(code, history, WORKFLOW_ID);
  const recorded = recordOfHistory(history);
  expect(asHistoryHoldsIt(done, recorded)).toEqual(recorded);
  return done;
}

/** A ledger started by update-with-start, as TemporalBudgetGate starts it: the first task grants and sets the window timer. */
function ledgerStartedBy(requestId: string, grant: ReserveResult, startInput: LedgerInput = input) {
  const h = new HistoryBuilder({ workflowType: 'budgetLedger', args: [startInput], startTime: START });
  const first = h.acceptUpdate(reserveUpdate.name, [{ endpoint: 'jobStatus', requestId }], requestId);
  const windowTimer = h.startTimer(MIDNIGHT_MS - h.workflowClock);
  h.completeUpdate(first, grant);
  return { h, windowTimer };
}

describe('budgetLedger replays of built histories', () => {
  /** A ledger that grants until its history passes `threshold` events, then continues as new carrying every grant. */
  async function runToThreshold(startInput: LedgerInput, threshold: number) {
    const grants: [string, ReserveResult][] = [];
    const grant = (requestId: string): ReserveResult => {
      const result = { granted: true as const, remaining: JOB_STATUS_LIMIT - grants.length - 1 };
      grants.push([requestId, result]);
      return result;
    };
    const { h, windowTimer } = ledgerStartedBy('wf-0/1/1', grant('wf-0/1/1'), startInput);
    for (let n = 1; h.length + 2 <= threshold; n++) {
      const requestId = `wf-${n}/1/1`;
      h.update(reserveUpdate.name, [{ endpoint: 'jobStatus', requestId }], grant(requestId), requestId);
    }
    // The workflow task that takes the history past the limit ends the run.
    h.update(reserveUpdate.name, [{ endpoint: 'jobStatus', requestId: 'last' }], grant('last'), 'last');
    h.cancelTimer(windowTimer);
    const carried = state({ used: { jobStatus: grants.length }, answered: Object.fromEntries(grants) });
    // The next run always gets today's threshold.
    const next = { tenant: input.tenant, settings, state: carried, maxHistoryEvents: LEDGER_MAX_HISTORY_EVENTS };
    const history = h.continueAsNew([next]);
    expect(history.events.length).toBeGreaterThan(threshold);
    const done = await replayBuilt(history);
    expect(done.updates).toHaveLength(grants.length);
    expect(done.continuedAsNew).toEqual([next]);
  }

  it(`a run without a threshold in its input continues as new past ${LEDGER_MAX_HISTORY_EVENTS} events, carrying every grant`, async () => {
    await runToThreshold(input, 2_000);
  });

  it("a run continues as new at the threshold its own input carries, whatever the code's current default", async () => {
    await runToThreshold({ ...input, maxHistoryEvents: 1_500 }, 1_500);
  });

  it('a history that continues as new before the window ends fails with DeterminismViolationError', async () => {
    const { h } = ledgerStartedBy('x', { granted: true, remaining: JOB_STATUS_LIMIT - 1 });
    h.workflowTask();
    await expect(replay(code, h.continueAsNew([input]), WORKFLOW_ID)).rejects.toThrow(DeterminismViolationError);
  });
});
