/**
 * The worker process that `npm start` and `npm run worker` run
 * (worker/process/main.ts). Reads and validates the configuration (one line
 * and exit 2 when it is wrong), serves the health endpoints, installs the
 * runtime logger and the Prometheus endpoint, waits for the Temporal server,
 * and runs the workers until SIGINT or SIGTERM, which the Temporal runtime
 * turns into a graceful shutdown (running activities finish or are
 * cancelled; nothing is lost either way).
 */
import { isIPv6 } from 'node:net';
import { Client } from '@temporalio/client';
import { makeTelemetryFilterString, NativeConnection, Runtime } from '@temporalio/worker';
import type { ActivityDeps } from '../../activities/index.js';
import { type Config, ConfigError, loadConfig } from '../../temporal.config.js';
import { pollTaskQueue, uploadTaskQueue } from '../../workflows/contracts/budget.js';
import { IMPORT_HISTOGRAM_BUCKETS } from '../../workflows/contracts/import-metrics.js';
import { EXIT } from '../shared/exit-codes.js';
import { packageVersion } from '../shared/version.js';
import { ConnectFailedError, connectWithRetry } from './connect-with-retry.js';
import { createActivityDeps } from './dependencies.js';
import { type HealthServer, startHealthServer } from './health-server.js';
import { createLogger, writeFatal } from './logging.js';
import { createWorkerMetrics } from './metrics.js';
import { Readiness } from './readiness.js';
import { runWorker } from './run-worker.js';
import { createTracing, otlpProcessor } from './tracing.js';
import { describeWorkflowSource, workflowSource } from './workflow-source.js';

/** host:port as a socket address, an IPv6 host in brackets. */
function socketAddress(host: string, port: number): string {
  return isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}

function installRuntime(config: Config, logger: ReturnType<typeof createLogger>): Runtime {
  const { metricsPort: port, httpHost } = config.worker;
  try {
    return Runtime.install({
      logger,
      telemetryOptions: {
        logging: { forward: {}, filter: makeTelemetryFilterString({ core: 'WARN' }) },
        metrics:
          port > 0
            ? {
                prometheus: {
                  bindAddress: socketAddress(httpHost, port),
                  histogramBucketOverrides: IMPORT_HISTOGRAM_BUCKETS,
                },
              }
            : undefined,
      },
    });
  } catch (err) {
    if (/address already in use/i.test((err as Error).message)) {
      throw new ConfigError(
        `WORKER_METRICS_PORT ${port} is already in use by another process; choose a free port, or 0 to turn metrics off`,
      );
    }
    throw err;
  }
}

/** What an operator needs to see the worker is pointed at the right place; never a secret. */
function startupFacts(config: Config): Record<string, unknown> {
  const { connection, namespace, taskQueue } = config.temporal;
  const { metricsPort, healthPort, httpHost } = config.worker;
  const url = (port: number, paths: string) => (port > 0 ? `http://${socketAddress(httpHost, port)}${paths}` : 'off');
  return {
    version: packageVersion(),
    temporal: connection.address,
    namespace,
    tls: connection.tls !== undefined && connection.tls !== false,
    apiKey: connection.apiKey !== undefined,
    taskQueues: [taskQueue, uploadTaskQueue(taskQueue), pollTaskQueue(taskQueue)],
    workflows: describeWorkflowSource(workflowSource(config.worker.workflowBundlePath)),
    service: config.service?.baseUrl,
    tenant: config.tenant,
    deployment: config.worker.deployment ?? 'unversioned',
    metrics: url(metricsPort, '/metrics'),
    health: url(healthPort, '/healthz, /readyz'),
    traces: config.worker.otlpEndpoint ?? 'off',
    // On or off only: the URL may itself be a secret (a Slack webhook).
    notifications: config.worker.notify ? 'on' : 'off',
  };
}

/** Before Temporal is reached, so a liveness probe passes while the worker waits for its server. */
async function startHealth(config: Config, readiness: Readiness): Promise<HealthServer | undefined> {
  const { healthPort, metricsPort, httpHost } = config.worker;
  if (healthPort === 0) return undefined;
  if (healthPort === metricsPort) {
    throw new ConfigError(
      `WORKER_HEALTH_PORT must differ from WORKER_METRICS_PORT (the metrics exporter has a port of its own); both are ${healthPort}`,
    );
  }
  return startHealthServer({ host: httpHost, port: healthPort, readiness: () => readiness.check() });
}

export interface WorkerProcessOptions {
  /**
   * Service time runs this many times faster than real time: only test
   * worker processes pass it (test/support/worker-main.ts); production
   * leaves it at 1.
   */
  timeCompression?: number;
  /**
   * How long a claimed sweep round is left to its holder before another
   * process takes it over: only test worker processes pass it, to see a dead
   * holder taken over in seconds; production keeps the job watcher's minute.
   */
  sweepLeaseMs?: number;
  /**
   * How long a task of a workflow cached here waits for this process before
   * any worker may take it: only test worker processes pass it, so that a
   * frozen process's cached workflows move on in a second; production keeps
   * the SDK's default.
   */
  stickyQueueTimeoutMs?: number;
}

async function main(options: WorkerProcessOptions): Promise<void> {
  const config = loadConfig(process.env, { needsService: true });
  const logger = createLogger(config.worker.logLevel);
  const readiness = new Readiness(config);
  const health = await startHealth(config, readiness);
  try {
    await run(config, logger, readiness, options);
  } finally {
    await health?.close();
  }
  logger.info('Worker stopped');
}

async function run(
  config: Config,
  logger: ReturnType<typeof createLogger>,
  readiness: Readiness,
  options: WorkerProcessOptions,
): Promise<void> {
  const runtime = installRuntime(config, logger);
  logger.info('Worker starting', startupFacts(config));
  const address = config.temporal.connection.address;
  const connection = await connectWithRetry(() => NativeConnection.connect(config.temporal.connection), {
    timeoutMs: config.worker.connectTimeoutMs,
    onRetry: (attempt, reason, delayMs) =>
      logger.warn('Temporal server not reachable yet; retrying', {
        temporal: address,
        attempt,
        reason,
        retryInMs: delayMs,
      }),
  }).catch((err: unknown) => {
    if (!(err instanceof ConnectFailedError)) throw err;
    const tries = err.attempts > 1 ? ` after ${err.attempts} tries` : '';
    throw new Error(
      `cannot reach the Temporal server at ${address} (${err.reason})${tries}; set TEMPORAL_ADDRESS, or WORKER_CONNECT_TIMEOUT to wait longer`,
    );
  });
  const otlp = config.worker.otlpEndpoint;
  const tracing = createTracing(otlp ? otlpProcessor(otlp) : undefined);
  const client = new Client({ connection, namespace: config.temporal.namespace, ...tracing.client });
  readiness.connected(connection, client);
  const metrics = createWorkerMetrics(runtime.metricMeter);
  const deps = createActivityDeps(config, client, metrics);
  try {
    await runWorker({
      config,
      connection,
      client,
      metrics,
      tracing,
      deps: { ...deps, settings: withTestSettings(deps.settings, options) },
      stickyQueueTimeoutMs: options.stickyQueueTimeoutMs,
      onReady: (workers) => {
        readiness.polling(workers);
        logger.info('Worker polling', { taskQueues: startupFacts(config).taskQueues });
      },
    });
  } finally {
    await tracing.shutdown();
    await connection.close();
  }
}

/** Runs the worker process until it is stopped; a failure is one line on stderr and its exit code. */
export function runWorkerProcess(options: WorkerProcessOptions = {}): Promise<void> {
  return main(options).catch((err: unknown) => {
    const isConfig = err instanceof ConfigError;
    writeFatal(isConfig ? err.message : `Worker failed: ${(err as Error)?.message ?? err}`);
    process.exit(isConfig ? EXIT.usage : EXIT.failed);
  });
}

/** The activities' settings with what a test worker process was given (worker-main.ts); production passes none. */
function withTestSettings(settings: ActivityDeps['settings'], options: WorkerProcessOptions): ActivityDeps['settings'] {
  const { timeCompression, sweepLeaseMs } = options;
  if (sweepLeaseMs === undefined) return { ...settings, timeCompression };
  return { ...settings, timeCompression, watch: { ...settings.watch, sweepLeaseMs } };
}
