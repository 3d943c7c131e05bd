/**
 * One measured scenario of the budget benchmark: a real worker (runWorker,
 * the production activities and the job watcher) on a real Temporal dev
 * server, the service simulator and s3rver, with service time compressed by
 * `compression`: the simulator processes a job in processingMs / compression,
 * and the worker's poll schedule (so its sweep interval, listing grace and
 * pacing window, see activities/index.ts) is the spec's divided by the same.
 * `workers` runs that many workers here, each with the activities a worker
 * process builds (its own watcher, budget gate and sweep board client): the
 * fleet's watchers, in one process.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowIdReusePolicy } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { AllowanceGate, DEFAULT_ALLOWANCE_HOLD_MS, type LedgerClient } from '../../activities/budget/allowance-gate.js';
import { TemporalBudgetGate } from '../../activities/budget/temporal-gate.js';
import type { SweepBoard } from '../../activities/watch/sweep-board.js';
import { loadConfig } from '../../temporal.config.js';
import { createActivityDeps } from '../../worker/process/dependencies.js';
import { runWorker } from '../../worker/process/run-worker.js';
import type { BudgetedEndpoint } from '../../workflows/contracts/endpoints.js';
import { isBudgetedEndpoint } from '../../workflows/contracts/endpoints.js';
import type { ImportFileInput } from '../../workflows/contracts/import-input.js';
import type { ImportFileResult } from '../../workflows/contracts/import-workflow.js';
import { accountsCsv, type OperatorStack, STACK_BUCKET } from '../support/operator-stack.js';

export interface ScenarioSpec {
  processingMs: number;
  history: number;
  compression: number;
  imports: number;
  /** Worker processes of the tenant, run here as workers of their own (each its own watcher, gate and board client). */
  workers?: number;
}

export interface Measured {
  imports: number;
  /** Calls per import on each budgeted endpoint, from the simulator's request log. */
  perImport: Partial<Record<BudgetedEndpoint, number>>;
  /** List calls per import made by creates (the workflows' own counts); the rest were the watcher's. */
  createListPerImport: number;
  /** The sweeps' list calls (all but the creates' own) per day of service time, at the run's arrival rate. */
  watcherListPerDay: number;
  /** Delay from a job's end to the read that told its import, in service time (ms). */
  delayMs: { p50: number; p99: number };
  ledger: { updatesPerImport: number; latencyMs: { p50: number; p99: number }; updates: number };
  /** Queries the watchers sent per import: the ledger's usage (for their pace) and the sweep board. */
  queriesPerImport: { usage: number; board: number };
  /** Imports in flight at once, at most. */
  maxInFlight: number;
  wallMs: number;
}

export const TENANT = 'bench-budget';

/** The spec's poll schedule divided by `compression`, whole milliseconds. */
function compressedSchedule(compression: number): string {
  return [5_000, 10_000, 20_000, 40_000, 60_000]
    .map((ms) => `${Math.max(1, Math.round(ms / compression))}ms`)
    .join(',');
}

/** Times every ledger Update (allowance, reserve, release, daily-limit) this worker makes, and counts its usage queries. */
function timedLedger(gate: LedgerClient, latencies: number[], queries: Queries): LedgerClient {
  const timed =
    <A extends unknown[], R>(f: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      const t0 = performance.now();
      try {
        return await f(...a);
      } finally {
        latencies.push(performance.now() - t0);
      }
    };
  return {
    tenant: gate.tenant,
    reserveAllowance: timed(gate.reserveAllowance.bind(gate)),
    reserve: timed(gate.reserve.bind(gate)),
    release: timed(gate.release.bind(gate)),
    reportDailyLimit: timed(gate.reportDailyLimit.bind(gate)),
    usage: () => {
      queries.usage += 1;
      return gate.usage();
    },
  };
}

interface Queries {
  usage: number;
  board: number;
}

/** The process's sweep board, counting its reads (queries; claims and publications are Updates). */
function countedBoard(board: SweepBoard, queries: Queries): SweepBoard {
  return {
    read: () => {
      queries.board += 1;
      return board.read();
    },
    claim: (request) => board.claim(request),
    publish: (request) => board.publish(request),
  };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/**
 * Every scenario's worker polls the same task queue: the tenant's ledger runs
 * there (started by the first reservation), and must outlive each worker.
 */
export async function runScenario(stack: OperatorStack, spec: ScenarioSpec, taskQueue: string): Promise<Measured> {
  const { sim, env } = stack;
  sim.setProcessingMs(Math.round(spec.processingMs / spec.compression));
  const runId = randomUUID();
  const vars = stack.workerEnv({
    IMPORT_TASK_QUEUE: taskQueue,
    IMPORT_TENANT: TENANT,
    IMPORT_POLL_SCHEDULE: compressedSchedule(spec.compression),
    IMPORT_POLL_JITTER: '0',
    // Counted, never refused: the card's budgets are applied to the counts afterwards. Reads stay 10x
    // writes, so the watcher's reserve for creates (one list call each) leaves it most of the list budget.
    IMPORT_BUDGET_WRITE_DAILY: '100000',
    IMPORT_BUDGET_READ_DAILY: '1000000',
    WORKER_MAX_CONCURRENT_POLLS: '1000',
    WORKER_MAX_CONCURRENT_UPLOADS: '8',
  });
  process.env.AWS_ACCESS_KEY_ID = vars.AWS_ACCESS_KEY_ID;
  process.env.AWS_SECRET_ACCESS_KEY = vars.AWS_SECRET_ACCESS_KEY;
  const config = loadConfig(vars, { needsService: true });
  const latencies: number[] = [];
  const queries: Queries = { usage: 0, board: 0 };
  const abort = new AbortController();
  const fleet = await Promise.all(
    Array.from({ length: spec.workers ?? 1 }, async (_, i) => {
      // A connection of its own per worker, as a process has: the SDK refuses two workers of one queue on one.
      const connection = i === 0 ? env.nativeConnection : await NativeConnection.connect({ address: env.address });
      const deps = createActivityDeps(config, env.client);
      // The process's gate as production builds it, its hold in service time, timing the Updates it sends.
      const ledger = new TemporalBudgetGate({
        client: env.client,
        taskQueue: config.temporal.taskQueue,
        tenant: config.tenant,
        settings: config.budget,
      });
      if (deps.sweepBoard) deps.sweepBoard = countedBoard(deps.sweepBoard, queries);
      deps.budget = new AllowanceGate(timedLedger(ledger, latencies, queries), {
        holdMs: DEFAULT_ALLOWANCE_HOLD_MS / spec.compression,
      });
      deps.settings.timeCompression = spec.compression;
      let ready!: () => void;
      const polling = new Promise<void>((r) => {
        ready = r;
      });
      const worker = runWorker({
        config,
        connection,
        client: env.client,
        signal: abort.signal,
        deps,
        onReady: () => ready(),
      });
      await Promise.race([polling, worker]);
      // Wrapped: an async function returning the promise itself would wait for the worker to end.
      return { worker: i === 0 ? worker : worker.finally(() => connection.close()) };
    }),
  );

  const keys = Array.from({ length: spec.imports }, (_, i) => `budget/${runId}/${i}.csv`);
  await Promise.all(keys.map((key, i) => stack.putObject(key, accountsCsv(200 + i))));
  const requestsBefore = sim.requests().length;
  const started = performance.now();
  // Imports arrive at the steady rate of 1,200 a day, in compressed time.
  const arrivalMs = 72_000 / spec.compression;
  let inFlight = 0;
  let maxInFlight = 0;
  const results = await Promise.all(
    keys.map(async (key, i) => {
      await new Promise((r) => setTimeout(r, i * arrivalMs));
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const input: ImportFileInput = {
        source: { bucket: STACK_BUCKET, key },
        dataImportName: `budget bench ${i}`,
        entityType: 'Account',
        listAction: 'insert',
        tenant: TENANT,
      };
      try {
        return await env.client.workflow.execute<(i: ImportFileInput) => Promise<ImportFileResult>>('importFile', {
          taskQueue,
          workflowId: `bench-budget-${runId}-${i}`,
          args: [input],
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        });
      } finally {
        inFlight -= 1;
      }
    }),
  );
  const wallMs = performance.now() - started;
  abort.abort();
  await Promise.all(fleet.map((f) => f.worker));

  const requests = sim.requests().slice(requestsBefore);
  const perImport: Measured['perImport'] = {};
  for (const r of requests) {
    if (!isBudgetedEndpoint(r.endpoint) || r.status === 0) continue;
    perImport[r.endpoint] = (perImport[r.endpoint] ?? 0) + 1 / spec.imports;
  }
  const createLists = results.reduce((n, r) => n + (r.apiCalls.listJobs ?? 0), 0);
  const delays = results.map((r) => {
    const job = sim.job(r.jobId)!;
    const ended = Date.parse(job.updatedAt);
    const learned = requests
      .filter((q) => q.endpoint === 'jobStatus' && q.path.endsWith(`/${r.jobId}`))
      .map((q) => Date.parse(q.at))
      .reduce((a, b) => Math.max(a, b), 0);
    return Math.max(0, learned - ended) * spec.compression;
  });
  return {
    imports: spec.imports,
    perImport,
    createListPerImport: createLists / spec.imports,
    watcherListPerDay:
      (requests.filter((r) => r.endpoint === 'listJobs' && r.status !== 0).length - createLists) /
      ((wallMs * spec.compression) / 86_400_000),
    delayMs: { p50: percentile(delays, 50), p99: percentile(delays, 99) },
    ledger: {
      updates: latencies.length,
      updatesPerImport: latencies.length / spec.imports,
      latencyMs: { p50: percentile(latencies, 50), p99: percentile(latencies, 99) },
    },
    queriesPerImport: { usage: queries.usage / spec.imports, board: queries.board / spec.imports },
    maxInFlight,
    wallMs,
  };
}
