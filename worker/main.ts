/**
 * `npm run worker` / `npm start`: the worker process. Reads and validates the
 * configuration (one clear line and exit 2 when it is wrong), installs the
 * runtime logger and the Prometheus endpoint, and runs the workers until
 * SIGINT or SIGTERM, which the Temporal runtime turns into a graceful shutdown
 * (running activities finish or are cancelled; nothing is lost either way).
 */
import { Client } from '@temporalio/client';
import { makeTelemetryFilterString, NativeConnection, Runtime } from '@temporalio/worker';
import { ConfigError, loadConfig } from '../temporal.config.js';
import { createLogger } from './logging.js';
import { createWorkerMetrics } from './metrics.js';
import { runWorker } from './run-worker.js';

async function main(): Promise<void> {
  const config = loadConfig(process.env, { needsService: true });
  const logger = createLogger(config.worker.logLevel);
  const port = config.worker.metricsPort;
  const runtime = Runtime.install({
    logger,
    telemetryOptions: {
      logging: { forward: {}, filter: makeTelemetryFilterString({ core: 'WARN' }) },
      metrics: port > 0 ? { prometheus: { bindAddress: `0.0.0.0:${port}` } } : undefined,
    },
  });
  const address = config.temporal.connection.address;
  logger.info('Worker starting', {
    taskQueue: config.temporal.taskQueue,
    namespace: config.temporal.namespace,
    temporal: address,
    service: config.service?.baseUrl,
    tenant: config.tenant,
    metrics: port > 0 ? `http://0.0.0.0:${port}/metrics` : 'off',
  });
  const connection = await NativeConnection.connect(config.temporal.connection).catch((err: Error) => {
    const reason = /Connection refused/i.test(err.message) ? 'connection refused' : err.message;
    throw new Error(`cannot reach the Temporal server at ${address} (${reason}); set TEMPORAL_ADDRESS`);
  });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  try {
    await runWorker({
      config,
      connection,
      client,
      metrics: createWorkerMetrics(runtime.metricMeter),
      onReady: () => logger.info('Worker polling', { taskQueue: config.temporal.taskQueue }),
    });
  } finally {
    await connection.close();
  }
  logger.info('Worker stopped');
}

main().catch((err: unknown) => {
  const message = err instanceof ConfigError ? err.message : `Worker failed: ${(err as Error)?.message ?? err}`;
  process.stderr.write(`${message}\n`);
  process.exit(err instanceof ConfigError ? 2 : 1);
});
