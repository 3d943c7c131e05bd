/**
 * `npm run demo`: the whole pipeline on one machine with nothing to set up.
 * Temporal (TEMPORAL_ADDRESS, else a dev server with its Web UI from the
 * binary worker/demo/temporal-binaries.ts finds, else the SDK's download), S3 (s3rver) holding a generated accounts CSV, the Company Data
 * Service simulator, and a worker in this process; runs one import end to end
 * with the progress bar, prints the summary and the UI link, and keeps the
 * stack up until Ctrl-C (or stops at once with --exit).
 */
import { randomUUID } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { makeTelemetryFilterString, Runtime } from '@temporalio/worker';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { loadConfig } from '../../temporal.config.js';
import { DEMO_TOKENS, startSimulator } from '../../test/simulator/server.js';
import type { ImportFileInput } from '../../workflows/contracts/import-input.js';
import { errorLine } from '../cli/cli-error.js';
import { workflowUiLink } from '../cli/connect.js';
import { guardBandBeforeReset, guardBandText } from '../cli/guard-band.js';
import { formatBytes } from '../cli/import-progress.js';
import { describeResult } from '../cli/start-command.js';
import { watchImport } from '../cli/watch-import.js';
import { createLogger } from '../process/logging.js';
import { EXIT } from '../shared/exit-codes.js';
import { startLocalS3 } from './local-s3.js';
import { startLocalTemporal } from './local-temporal.js';
import { sampleAccountsCsv } from './sample-csv.js';
import { listenForStop, StopRequested, type StopSignal } from './stop-signal.js';

const BUCKET = 'demo-imports';
/** The spec's 60 s poll ceiling over the demo's last poll delay (5 s). */
const DEMO_TIME_COMPRESSION = 12;
const KEY = 'accounts/sample-accounts.csv';
/**
 * The demo's budgets are its own tenant's: on a shared server (TEMPORAL_ADDRESS) the default tenant's
 * ledger counts a real deployment's calls, which a demo must neither spend nor be held back by.
 */
const DEMO_TENANT = 'demo';

/**
 * A task queue no other worker polls: on a shared server a deployment's worker on `bulk-import` would take
 * the demo's import (and fail it, having no access to the demo's S3), and a second demo's worker would too.
 */
function demoTaskQueue(): string {
  return `demo-${randomUUID().slice(0, 8)}`;
}

interface DemoOptions {
  exit?: boolean;
  rows: number;
}

function positiveInt(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive whole number');
  return n;
}

/** Commander's errors throw instead of exiting, so that a usage error exits 2 as everywhere else. */
function parseArgs(argv: string[]): DemoOptions {
  return new Command('demo')
    .exitOverride()
    .description('Run one import end to end on a local stack: Temporal, s3rver, the service simulator and a worker.')
    .option('--exit', 'stop the stack after the import instead of waiting for Ctrl-C')
    .option('--rows <n>', 'rows in the generated accounts CSV', positiveInt, 50_000)
    .addHelpText(
      'after',
      '\nTemporal: TEMPORAL_ADDRESS=host:port uses a running server; otherwise a dev server starts from TEMPORAL_SERVER_PATH, the project install (npm run setup:temporal) or PATH, else the SDK downloads one.',
    )
    .parse(argv)
    .opts<DemoOptions>();
}

const say = (line: string) => process.stdout.write(`${line}\n`);

/** Long enough for a worker to finish its shutdown; a stack that takes longer is left to the operating system. */
const SHUTDOWN_DEADLINE_MS = 30_000;

/**
 * The worker logs at WARN unless LOG_LEVEL says otherwise: the demo's own lines
 * tell the story. Installed before the dev server starts, which creates the runtime.
 * No shutdown signals: the demo owns SIGINT and SIGTERM (demo/stop-signal.ts)
 * and stops its stack in order, the workers first.
 */
function installRuntimeLogger(): Runtime {
  const { logLevel } = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL || 'WARN' }).worker;
  return Runtime.install({
    shutdownSignals: [],
    logger: createLogger(logLevel),
    telemetryOptions: { logging: { forward: {}, filter: makeTelemetryFilterString({ core: 'WARN' }) } },
  });
}

/** Stops what started, last first; gives up after the deadline rather than hang (the caller then exits). */
async function tearDown(stack: (() => Promise<void>)[]): Promise<boolean> {
  const stopAll = async () => {
    for (const stop of stack.reverse()) await stop().catch(() => undefined);
    return true;
  };
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), SHUTDOWN_DEADLINE_MS);
  });
  try {
    return await Promise.race([stopAll(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

async function demo(options: DemoOptions, stop: StopSignal): Promise<void> {
  const stack: (() => Promise<void>)[] = [];
  // Idle once everything is torn down, or never used when start-up failed: shut it down so the process can end.
  const runtime = installRuntimeLogger();
  try {
    // Temporal first: without a server nothing else is worth starting, and the failure comes in seconds.
    const temporal = await startLocalTemporal(process.env);
    stack.push(() => temporal.env.teardown());
    stop.throwIfRequested();
    say(`Temporal      ${temporal.origin}`);
    say(
      `              ${temporal.address} (namespace ${temporal.namespace})${temporal.uiUrl ? `, Web UI ${temporal.uiUrl}` : ''}`,
    );

    const s3 = await startLocalS3({ buckets: [BUCKET] });
    stack.push(() => s3.close());
    stop.throwIfRequested();
    const csv = sampleAccountsCsv(options.rows);
    await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: KEY, Body: csv, ContentType: 'text/csv' }));
    say(`S3 (s3rver)   ${s3.endpoint}  s3://${BUCKET}/${KEY} (${options.rows} rows, ${formatBytes(csv.length)})`);

    const sim = await startSimulator({ processingMs: 2_000 });
    stack.push(() => sim.close());
    stop.throwIfRequested();
    say(`Service       ${sim.baseUrl} (simulator)`);

    // The worker's S3 client takes credentials from the AWS default chain, as in production.
    process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
    process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
    const config = loadConfig(
      {
        ...process.env,
        TEMPORAL_ADDRESS: temporal.address,
        TEMPORAL_NAMESPACE: temporal.namespace,
        TEMPORAL_UI_URL: temporal.uiUrl ?? process.env.TEMPORAL_UI_URL,
        COMPANY_DATA_BASE_URL: sim.baseUrl,
        COMPANY_DATA_TOKEN: DEMO_TOKENS.importer,
        COMPANY_DATA_TOKEN_FILE: undefined,
        COMPANY_DATA_CLIENT_ID: undefined,
        S3_ENDPOINT: s3.endpoint,
        IMPORT_TASK_QUEUE: demoTaskQueue(),
        IMPORT_TENANT: DEMO_TENANT,
        WORKER_METRICS_PORT: '0',
        IMPORT_POLL_SCHEDULE: '1s,2s,5s',
      },
      { needsService: true },
    );

    // Loaded only now, so that a missing server is reported before the worker's modules load.
    const { runWorker } = await import('../process/run-worker.js');
    const { createActivityDeps } = await import('../process/dependencies.js');
    const stopWorker = new AbortController();
    const client = temporal.env.client;
    const deps = createActivityDeps(config, client);
    let polling: () => void = () => undefined;
    const workerPolls = new Promise<void>((resolve) => {
      polling = resolve;
    });
    const workerDone = runWorker({
      config,
      connection: temporal.env.nativeConnection,
      client,
      signal: stopWorker.signal,
      // The simulator ends a job in 2 s, not hours: service time runs as fast as the 5 s poll ceiling is to the spec's 60 s.
      deps: { ...deps, settings: { ...deps.settings, timeCompression: DEMO_TIME_COMPRESSION } },
      onReady: () => polling(),
    });
    stack.push(async () => {
      stopWorker.abort();
      await workerDone;
    });
    // The import starts once its worker polls, so the progress never says "no worker polls" for its own.
    await Promise.race([workerPolls, workerDone]);
    stop.throwIfRequested();
    say(`Worker        task queue ${config.temporal.taskQueue}, tenant ${config.tenant} (the demo's own)`);
    const band = guardBandBeforeReset(config.budget.resetMinuteUtc, Date.now());
    if (band) say(`Budget        ${guardBandText(band)}: this import waits until then`);
    const input: ImportFileInput = {
      source: { bucket: BUCKET, key: KEY },
      dataImportName: 'Demo accounts',
      entityType: 'Account',
      listAction: 'insert',
      tenant: config.tenant,
    };
    const workflowId = `demo-accounts-${new Date().toISOString().replace(/[-:.]/g, '').slice(0, 15)}`;
    const handle = await client.workflow.start('importFile', {
      taskQueue: config.temporal.taskQueue,
      workflowId,
      args: [input],
    });
    say(`Import        ${workflowId}`);
    say(`              ${workflowUiLink(config.temporal, workflowId)}`);

    // A worker that fails or stops must end the demo, not leave it waiting on an import nobody runs.
    const outcome = await Promise.race([
      watchImport(handle, { signal: stop.signal }),
      workerDone.then(() => undefined),
    ]);
    if (!outcome) throw new Error('the worker stopped before the import ended');
    if (!outcome.ok) throw new Error(`import failed: ${outcome.reason}`);
    const { result } = outcome;
    const job = sim.job(result.jobId);
    say(describeResult(result));
    say(
      `  service calls: ${Object.entries(result.apiCalls)
        .map(([endpoint, n]) => `${endpoint} ${n}`)
        .join(', ')}`,
    );
    if (job) {
      say(
        `  simulator: job ${job.id} ${job.state}, received ${formatBytes(job.bytesReceived)}, header ${job.header?.join(', ') ?? '-'}`,
      );
    }
    say(`  Temporal UI: ${workflowUiLink(config.temporal, workflowId)}`);

    if (options.exit) return;
    say('');
    say('The stack stays up: try the CLI against it, e.g.');
    // The UI link `status` prints comes from TEMPORAL_UI_URL: the demo's UI is on a port of its own.
    const ui = temporal.uiUrl ? ` TEMPORAL_UI_URL=${temporal.uiUrl}` : '';
    say(`  TEMPORAL_ADDRESS=${temporal.address}${ui} npm run cli -- status ${workflowId}`);
    say(`  TEMPORAL_ADDRESS=${temporal.address} npm run cli -- budget --tenant ${config.tenant}`);
    say('Press Ctrl-C to stop.');
    // The stop asked for: not a failure.
    await stop.whenRequested.catch(() => undefined);
    say('Stopping.');
  } finally {
    // A runtime whose workers did not stop is left to the process exit.
    if (await tearDown(stack)) await runtime.shutdown();
    else process.stderr.write(`demo: the stack did not stop within ${SHUTDOWN_DEADLINE_MS / 1000} s\n`);
  }
}

/** Resolves to the exit code: 2 for a usage error, 130 when stopped before the import ended. */
async function main(stop: StopSignal): Promise<number> {
  let options: DemoOptions;
  try {
    options = parseArgs(process.argv);
  } catch (err) {
    // Commander has written its own line (or the help).
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    throw err;
  }
  try {
    await demo(options, stop);
    return EXIT.ok;
  } catch (err) {
    // A failing step while stopping (the servers got the terminal's Ctrl-C too) is the stop, not a failure.
    if (err instanceof StopRequested || stop.requested) {
      process.stderr.write('demo: stopped before the import ended\n');
      return EXIT.interrupted;
    }
    process.stderr.write(`demo: ${errorLine(err)}\n`);
    return EXIT.failed;
  }
}

process.exitCode = await main(listenForStop());
// A stack that did not stop in time must not keep the process: the signal listeners stay until here.
process.exit();
