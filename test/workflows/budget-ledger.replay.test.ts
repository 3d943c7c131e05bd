/**
 * The budget ledger entity workflow, replayed in the real SDK sandbox against
 * histories built from scenarios: reservations through updates, the
 * exhausted signal, and continue-as-new at the window's reset or when the
 * history grows.
 */
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type BudgetSettings,
  LEDGER_MAX_HISTORY_EVENTS,
  type LedgerInput,
} from '../../workflows/policy/budget-contracts.js';
import { BUDGETED_ENDPOINTS, type BudgetedEndpoint } from '../../workflows/policy/endpoints.js';
import { type History, HistoryBuilder } from './history-builder.js';

const workflowsPath = path.resolve(import.meta.dirname, '../../workflows/index.ts');
const silent = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
let code: string;

beforeAll(async () => {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  ({ code } = await bundleWorkflowCode({ workflowsPath, logger: silent }));
});

const replay = (history: History) =>
  Worker.runReplayHistory({ workflowBundle: { code } }, history, 'budget-ledger-acme');

const settings: BudgetSettings = {
  limits: Object.fromEntries(Object.entries(BUDGETED_ENDPOINTS).map(([n, e]) => [n, e.defaultDailyLimit])) as Record<
    BudgetedEndpoint,
    number
  >,
  headroomPercent: 10,
  resetMinuteUtc: 0,
};
const input: LedgerInput = { tenant: 'acme', settings };
const START = '2026-01-01T10:00:00Z';
const MIDNIGHT_MS = Date.parse('2026-01-02T00:00:00Z');

function ledgerHistory() {
  return new HistoryBuilder({ workflowType: 'budgetLedger', args: [input], startTime: START });
}

describe('budgetLedger replays', () => {
  it('answers reserve updates, takes the exhausted signal, and continues as new at the window reset', async () => {
    const h = ledgerHistory();
    const windowTimer = h.startTimer(MIDNIGHT_MS - h.now);
    h.update('reserve', [{ endpoint: 'createJob', requestId: 'wf-1/2/1' }], { granted: true, remaining: 1079 });
    h.update('reserve', [{ endpoint: 'createJob', requestId: 'wf-1/2/1' }], { granted: true, remaining: 1079 });
    h.signal('exhausted', { endpoint: 'submitData', until: '2026-01-02T00:00:00.000Z' }).workflowTask();
    h.advanceTo('2026-01-02T00:00:00Z').fireTimer(windowTimer).workflowTask();
    const history = h.continueAsNew([
      { ...input, state: { windowStartMs: MIDNIGHT_MS, used: {}, exhaustedUntil: {}, answered: {} } },
    ]);
    await replay(history);
  });

  it('continues as new early when the server suggests it, cancelling the window timer', async () => {
    const h = ledgerHistory();
    const windowTimer = h.startTimer(MIDNIGHT_MS - h.now);
    h.update('reserve', [{ endpoint: 'jobStatus', requestId: 'wf-1/5/1' }], { granted: true, remaining: 3239 });
    // The server's hint arrives on a workflow task that has something to do (here a signal).
    h.signal('exhausted', { endpoint: 'jobStatus', until: '2026-01-01T12:00:00.000Z' });
    h.workflowTask({ suggestContinueAsNew: true }).cancelTimer(windowTimer);
    await replay(h.continueAsNew([input]));
  });

  it(`continues as new once its history passes ${LEDGER_MAX_HISTORY_EVENTS} events`, async () => {
    const h = ledgerHistory();
    const windowTimer = h.startTimer(MIDNIGHT_MS - h.now);
    let n = 0;
    while (h.length + 2 <= LEDGER_MAX_HISTORY_EVENTS) {
      n += 1;
      h.update('reserve', [{ endpoint: 'jobStatus', requestId: `wf-1/${n}/1` }], { granted: true, remaining: 0 });
    }
    // The workflow task that takes the history past the limit ends the run.
    h.update('reserve', [{ endpoint: 'jobStatus', requestId: 'last' }], { granted: true, remaining: 0 });
    h.cancelTimer(windowTimer);
    const history = h.continueAsNew([input]);
    expect(history.events.length).toBeGreaterThan(LEDGER_MAX_HISTORY_EVENTS);
    await replay(history);
  });

  it("a run continues as new at the threshold its own input carries, whatever the code's current default", async () => {
    const lowered: LedgerInput = { ...input, maxHistoryEvents: 1_500 };
    const h = new HistoryBuilder({ workflowType: 'budgetLedger', args: [lowered], startTime: START });
    const windowTimer = h.startTimer(MIDNIGHT_MS - h.now);
    let n = 0;
    while (h.length + 2 <= 1_500) {
      n += 1;
      h.update('reserve', [{ endpoint: 'jobStatus', requestId: `wf-1/${n}/1` }], { granted: true, remaining: 0 });
    }
    h.update('reserve', [{ endpoint: 'jobStatus', requestId: 'last' }], { granted: true, remaining: 0 });
    h.cancelTimer(windowTimer);
    await replay(h.continueAsNew([lowered]));
  });

  it('a history that continues as new before the window ends fails with DeterminismViolationError', async () => {
    const h = ledgerHistory();
    h.startTimer(MIDNIGHT_MS - h.now);
    h.update('reserve', [{ endpoint: 'createJob', requestId: 'x' }], { granted: true, remaining: 1079 });
    h.workflowTask();
    await expect(replay(h.continueAsNew([input]))).rejects.toThrow(DeterminismViolationError);
  });
});
