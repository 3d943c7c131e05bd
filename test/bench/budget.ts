/**
 * Budget benchmark (not a test): `npm run bench:budget -- [--json] [--imports N] [--history-imports N]`.
 *
 * Per scenario (jobs that process 1 min, 10 min, 1 h, 6 h × a history of 0,
 * 5,000, 50,000 completed jobs) it prints the calls per import on each
 * budgeted endpoint, the imports a day the card's budgets (1,200 creates and
 * uploads, 3,600 of each read) sustain with the binding endpoint, the delay
 * from a job's end to its import knowing it (p50/p99), the ledger Updates
 * per import with their latency, and the machine's load while it ran. After
 * the rows: the list calls a ledger that starts without counts spends to
 * count its window, at a history of 0, 5,000 and 50,000 jobs.
 *
 * Measured: a real worker, a real Temporal dev server, the simulator, with
 * service time compressed (the factor is printed per scenario). The ledger
 * counts every call but refuses none (its limits are set high), so that the
 * counts are those of an unconstrained day; the card's budgets are applied to
 * them afterwards. Every row is measured in a run of its own, at its
 * processing time and history. Extrapolated, and marked so: the steady state
 * at the sustained rate (jobs in processing at once, the paced sweep interval
 * and the delay it gives, see budget-model.ts).
 */
import { randomUUID } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { Client } from '@temporalio/client';
import { makeCountWindowSpend } from '../../activities/budget/window-spend.js';
import { ServiceClient } from '../../activities/service/client.js';
import { createTokenSource } from '../../activities/service/token-source.js';
import { Secret } from '../../temporal.config.js';
import { LEDGER_MAX_HISTORY_EVENTS, ledgerWorkflowId } from '../../workflows/contracts/budget.js';
import type { BudgetedEndpoint } from '../../workflows/contracts/endpoints.js';
import { DEMO_TOKENS, startSimulator } from '../simulator/server.js';
import { startOperatorStack } from '../support/operator-stack.js';
import { type PerImport, type SteadyState, steadyState } from './budget-model.js';
import { type Measured, runScenario, TENANT } from './budget-run.js';
import { startQuietDevServer } from './quiet-dev-server.js';
import { createJob } from './simulator-jobs.js';

const MIN = 60_000;
interface Processing {
  label: string;
  ms: number;
  compression: number;
}

const PROCESSING: readonly Processing[] = [
  // A small job: it ends within seconds of its upload.
  { label: '3 s', ms: 3_000, compression: 12 },
  { label: '1 min', ms: MIN, compression: 60 },
  { label: '10 min', ms: 10 * MIN, compression: 120 },
  { label: '1 h', ms: 60 * MIN, compression: 360 },
  { label: '6 h', ms: 360 * MIN, compression: 1_440 },
];
const HISTORIES = [0, 5_000, 50_000] as const;

interface Row {
  processing: string;
  /** Worker processes of the tenant (as workers of their own in this process). */
  workers: number;
  history: number;
  compression: number;
  measured: Measured;
  /** Which figures were not measured in this row's own run. */
  extrapolated: string[];
  /** The machine's 1-minute load average as the row's run began and ended. */
  load: { start: number; end: number };
  perImport: PerImport;
  steady: SteadyState;
}

function parse() {
  const { values } = parseArgs({
    options: {
      json: { type: 'boolean', default: false },
      imports: { type: 'string', default: '30' },
      'history-imports': { type: 'string', default: '3' },
      only: { type: 'string' },
      compression: { type: 'string' },
      workers: { type: 'string', default: '1' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(
      'Usage: npm run bench:budget -- [--json] [--imports N] [--history-imports N]\n' +
        '  --imports          imports per processing-time scenario at history 0 (default 30)\n' +
        '  --history-imports  imports per scenario at history 5,000 and 50,000 (default 3)\n' +
        '  --only LABEL       one processing time at history 0 (e.g. "1 h"), no history rows\n' +
        '  --compression N    service time N times faster than real time for every row (default per row)\n' +
        '  --workers LIST     the fleet: worker processes of the tenant, run here as that many workers with\n' +
        '                     their own watcher each; a row per count (default 1; e.g. 1,4,16)\n' +
        '  --json             print one JSON object instead of the table',
    );
    process.exit(0);
  }
  return {
    json: values.json,
    imports: Number(values.imports),
    historyImports: Number(values['history-imports']),
    only: values.only,
    compression: values.compression === undefined ? undefined : Number(values.compression),
    workers: values.workers.split(',').map((n) => {
      const count = Number(n);
      if (!Number.isInteger(count) || count < 1 || count > 32) {
        throw new Error(`--workers takes counts from 1 to 32, comma-separated; got ${JSON.stringify(n)}`);
      }
      return count;
    }),
  };
}

async function main(): Promise<void> {
  const args = parse();
  // With --json, stdout carries the object alone: a server of our own prints its banner elsewhere.
  const server = args.json && !process.env.TEMPORAL_ADDRESS ? await startQuietDevServer() : undefined;
  if (server) process.env.TEMPORAL_ADDRESS = server.address;
  try {
    const { rows, ledger, coldLedger } = await measure(args);
    const perDay = ledgerDay(rows, ledger);
    if (args.json) {
      console.log(JSON.stringify({ budgets: CARD, rows, ledger: { ...ledger, ...perDay }, coldLedger }, null, 2));
    } else {
      printTable(rows);
      printColdLedger(coldLedger);
      console.log(
        `\nLedger: ${ledger.runs} runs (continue-as-new at ${LEDGER_MAX_HISTORY_EVENTS} history events), ` +
          `${fmt(ledger.eventsPerUpdate, 2)} history events per Update in the current run (${ledger.updatesInRun} Updates, ${ledger.eventsInRun} events). ` +
          `A day of 1,200 imports at the highest measured Updates per import (${fmt(perDay.updatesPerImport)}): ` +
          `${Math.round(perDay.updatesPerDay)} Updates, about ${Math.round(perDay.updatesPerRun)} per run, ${Math.ceil(perDay.runsPerDay)} runs a day; Temporal's limit is 2,000 Updates per run.`,
      );
    }
  } finally {
    await server?.stop();
  }
}

/** Every row, each from a run of its own (history 0 first, then the tenant's history grown to each size). */
async function measure(
  args: ReturnType<typeof parse>,
): Promise<{ rows: Row[]; ledger: LedgerRuns; coldLedger: ColdLedgerCount[] }> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const stack = await startOperatorStack({
    simulator: { dailyLimits: { listJobs: 1e9, jobStatus: 1e9, createJob: 1e9, submitData: 1e9 } },
  });
  const rows: Row[] = [];
  const taskQueue = `bench-budget-${randomUUID()}`;
  try {
    const chosen = PROCESSING.filter((q) => args.only === undefined || q.label === args.only);
    let history = 0;
    for (const h of args.only === undefined ? HISTORIES : [0]) {
      stack.sim.addCompletedHistory(h - history);
      history = h;
      const imports = h === 0 ? args.imports : args.historyImports;
      for (const p of chosen.map((q) => ({ ...q, compression: args.compression ?? q.compression }))) {
        for (const workers of args.workers) {
          log(
            `history ${h}, processing ${p.label} (compressed ${p.compression}x), ${workers} workers, ${imports} imports ...`,
          );
          const spec = { processingMs: p.ms, history: h, compression: p.compression, imports, workers };
          const loadAtStart = loadavg()[0] as number;
          const measured = await runScenario(stack, spec, taskQueue);
          rows.push(row(p, h, workers, measured, { start: loadAtStart, end: loadavg()[0] as number }));
        }
      }
    }
    const ledger = await ledgerRuns(stack.env.client);
    const inWindow = rows.reduce((n, r) => n + r.measured.imports, 0);
    return { rows, ledger, coldLedger: await coldLedgerCounts(inWindow) };
  } finally {
    await stack.close();
  }
}

interface LedgerRuns {
  runs: number;
  updatesInRun: number;
  eventsInRun: number;
  eventsPerUpdate: number;
}

/** The ledger's runs so far, and how many history events one Update costs in its current run. */
async function ledgerRuns(client: Client): Promise<LedgerRuns> {
  const workflowId = ledgerWorkflowId(TENANT);
  let runs = 0;
  for await (const _ of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs += 1;
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const updatesInRun = events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length;
  return { runs, updatesInRun, eventsInRun: events.length, eventsPerUpdate: events.length / Math.max(1, updatesInRun) };
}

function ledgerDay(rows: Row[], ledger: LedgerRuns) {
  const updatesPerImport = Math.max(...rows.map((r) => r.measured.ledger.updatesPerImport));
  const updatesPerDay = updatesPerImport * 1_200;
  const updatesPerRun = Math.min(updatesPerDay, LEDGER_MAX_HISTORY_EVENTS / ledger.eventsPerUpdate);
  return { updatesPerImport, updatesPerDay, updatesPerRun, runsPerDay: updatesPerDay / updatesPerRun };
}

interface ColdLedgerCount {
  /** Completed jobs behind the window. */
  history: number;
  /** Jobs created in the window (the rows' imports). */
  inWindow: number;
  listCalls: number;
  partial: boolean;
}

/**
 * What a ledger that starts without counts spends to read the service's own
 * record of its window (its countWindowSpend activity, run here against a
 * simulator of its own) at a history of 0, 5,000 and 50,000 completed jobs
 * behind the window, with as many jobs in the window as the rows made.
 */
async function coldLedgerCounts(inWindow: number): Promise<ColdLedgerCount[]> {
  const counts: ColdLedgerCount[] = [];
  for (const history of HISTORIES) {
    const sim = await startSimulator({ completedHistory: history });
    const service = new ServiceClient({
      baseUrl: sim.baseUrl,
      tokens: createTokenSource({ kind: 'env', token: new Secret(DEMO_TOKENS.importer) }),
    });
    try {
      const windowStart = new Date(Date.now() - 1_000).toISOString();
      for (let i = 0; i < inWindow; i++) await createJob(sim.baseUrl);
      const spent = await makeCountWindowSpend({ service })({ windowStart, createLimit: CARD.createJob });
      counts.push({ history, inWindow: spent.createJob, listCalls: spent.listJobs, partial: spent.partial === true });
    } finally {
      await service.close();
      await sim.close();
    }
  }
  return counts;
}

function printColdLedger(counts: ColdLedgerCount[]): void {
  const each = counts.map(
    (c) => `${c.listCalls} at a history of ${c.history.toLocaleString('en-US')}${c.partial ? ' (partial)' : ''}`,
  );
  console.log(
    `\nA ledger that starts without counts (its countWindowSpend, against a simulator with the rows' ${counts[0]?.inWindow ?? 0} jobs in the window): ` +
      `${each.join(', ')} list calls; at most the pages ${CARD.createJob.toLocaleString('en-US')} creations fill (13) and the probe for the last page.`,
  );
}

const CARD = { createJob: 1_200, submitData: 1_200, jobStatus: 3_600, listJobs: 3_600 };

/** One row from its own run: the creates' list calls count per import, the watcher's are a per-sweep cost (the model). */
function row(p: Processing, history: number, workers: number, measured: Measured, load: Row['load']): Row {
  const perImport: PerImport = { ...measured.perImport, listJobs: measured.createListPerImport };
  return {
    processing: p.label,
    workers,
    history,
    compression: p.compression,
    measured,
    extrapolated: ['steady state at the sustained rate (budget-model.ts)'],
    load,
    perImport,
    steady: steadyState(perImport, p.ms),
  };
}

const ENDPOINTS: BudgetedEndpoint[] = ['createJob', 'submitData', 'jobStatus', 'listJobs'];
const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '-');
const human = (ms: number) =>
  ms >= 3_600_000 ? `${fmt(ms / 3_600_000)} h` : ms >= 60_000 ? `${fmt(ms / 60_000)} min` : `${fmt(ms / 1000, 0)} s`;

function printTable(rows: Row[]): void {
  console.log('Budget benchmark: card budgets 1,200 creates/uploads, 3,600 per read endpoint a day.');
  console.log(
    "Service time compressed per row (simulator processing and the worker's poll schedule, sweep, grace and pacing window alike); delays are given in service time.",
  );
  console.log(
    `load: the machine's 1-minute load average as the row began and ended (${availableParallelism()} cores, shared with every other process).`,
  );
  console.log(
    "workers: the tenant's worker processes, run as that many workers in this process, each with its own watcher; sweep list/day: the sweeps' list calls per day of service time at the run's rate of 1,200 imports a day.\n",
  );
  console.log(
    [
      'processing',
      'history',
      'workers',
      'x',
      'create',
      'upload',
      'status',
      'list(create+watch)',
      'imports/day (binding)',
      'sweep list/day',
      'delay p50/p99 measured',
      'steady: sweep / delay p50',
      'ledger upd/import',
      'upd p50/p99 ms',
      'queries/import (usage+board)',
      'in flight',
      'load',
    ].join(' | '),
  );
  for (const r of rows) {
    const m = r.measured;
    const cells = [
      r.processing,
      String(r.history),
      String(r.workers),
      String(r.compression),
      ...ENDPOINTS.slice(0, 3).map((e) => fmt(m.perImport[e] ?? 0, 2)),
      `${fmt(m.perImport.listJobs ?? 0, 2)} (${fmt(r.perImport.listJobs ?? 0, 2)}+${fmt((m.perImport.listJobs ?? 0) - (r.perImport.listJobs ?? 0), 2)})`,
      `${r.steady.importsPerDay} (${r.steady.binding})`,
      fmt(m.watcherListPerDay, 0),
      `${human(m.delayMs.p50)} / ${human(m.delayMs.p99)}`,
      `${human(r.steady.sweepIntervalMs)} / ${human(r.steady.delayMs.p50)}`,
      fmt(m.ledger.updatesPerImport, 1),
      `${fmt(m.ledger.latencyMs.p50)} / ${fmt(m.ledger.latencyMs.p99)}`,
      `${fmt(m.queriesPerImport.usage + m.queriesPerImport.board, 0)} (${fmt(m.queriesPerImport.usage, 0)}+${fmt(m.queriesPerImport.board, 0)})`,
      String(m.maxInFlight),
      `${fmt(r.load.start)} to ${fmt(r.load.end)}`,
    ];
    console.log(cells.join(' | '));
  }
  console.log('\nExtrapolated figures per row:');
  for (const r of rows) console.log(`  ${r.processing}, history ${r.history}: ${r.extrapolated.join('; ')}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
