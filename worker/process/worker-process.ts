/**
 * The worker process that `npm start` and `npm run worker` run
 * (worker/process/main.ts). Reads and validates the configuration (one line and exit 2 when
 * it is wrong), installs the runtime logger and the Prometheus endpoint,
 * waits for the Temporal server, and runs the workers until SIGINT or
 * SIGTERM, which the Temporal runtime turns into a graceful shutdown
 * (running activities finish or are cancelled; nothing is lost either way).
 */
import { Client } from '@temporalio/client';
import { makeTelemetryFilterString, NativeConnection, Runtime } from '@temporalio/worker';
import { type Config, ConfigError, loadConfig } from '../../temporal.config.js';
import { pollTaskQueue, uploadTaskQueue } from '../../workflows/contracts/budget.js';
import { EXIT } from '../shared/exit-codes.js';
import { packageVersion } from '../shared/version.js';
import { ConnectFailedError, connectWithRetry } from './connect-with-retry.js';
import { createActivityDeps } from './dependencies.js';
import { createLogger, writeFatal } from './logging.js';
import { createWorkerMetrics } from './metrics.js';
import { runWorker } from './run-worker.js';
import { describeWorkflowSource, workflowSource } from './workflow-source.js';

function installRuntime(config: Config, logger: ReturnType<typeof createLogger>): Runtime {
  const port = config.worker.metricsPort;
  try {
    return Runtime.install({
      logger,
      telemetryOptions: {
        logging: { forward: {}, filter: makeTelemetryFilterString({ core: 'WARN' }) },
        metrics: port > 0 ? { prometheus: { bindAddress: `0.0.0.0:${port}` } } : undefined,
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
  const port = config.worker.metricsPort;
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
    metrics: port > 0 ? `http://0.0.0.0:${port}/metrics` : 'off',
  };
}

export interface WorkerProcessOptions {
  /**
   * Service time runs this many times faster than real time: only test
   * worker processes pass it (test/support/worker-main.ts); production
   * leaves it at 1.
   */
  timeCompression?: number;
}

async function main(options: WorkerProcessOptions): Promise<void> {
  const config = loadConfig(process.env, { needsService: true });
  const logger = createLogger(config.worker.logLevel);
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
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const metrics = createWorkerMetrics(runtime.metricMeter);
  const deps = createActivityDeps(config, client, metrics);
  try {
    await runWorker({
      config,
      connection,
      client,
      metrics,
      deps: { ...deps, settings: { ...deps.settings, timeCompression: options.timeCompression } },
      onReady: () => logger.info('Worker polling', { taskQueues: startupFacts(config).taskQueues }),
    });
  } finally {
    await connection.close();
  }
  logger.info('Worker stopped');
}

/** Runs the worker process until it is stopped; a failure is one line on stderr and its exit code. */
export function runWorkerProcess(options: WorkerProcessOptions = {}): Promise<void> {
  return main(options).catch((err: unknown) => {
    const isConfig = err instanceof ConfigError;
    writeFatal(isConfig ? err.message : `Worker failed: ${(err as Error)?.message ?? err}`);
    process.exit(isConfig ? EXIT.usage : EXIT.failed);
  });
}
