/**
 * Runs the three workers of one process on a shared connection:
 * - the main task queue: every workflow and the short activities (status,
 *   create job, mappings, budget reads), many at once;
 * - the uploads task queue: only uploadData and planRows (the row check's
 *   whole-file pass), a few at once, because each moves gigabytes through
 *   this process;
 * - the polls task queue: only awaitJobCompletion, which holds a slot for as
 *   long as a job runs (hours), so it must not take the short activities' slots.
 * With a Worker Deployment configured, all three poll as its version, so a
 * pinned import's activities run on workers of the release that started it.
 * Used by `npm run worker` and in-process by the local demo.
 */
import type { Client } from '@temporalio/client';
import { type NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { ActivityDeps } from '../../activities/index.js';
import { createActivities } from '../../activities/index.js';
import type { Config, WorkerDeployment } from '../../temporal.config.js';
import { pollTaskQueue, uploadTaskQueue } from '../../workflows/contracts/budget.js';
import { createActivityDeps } from './dependencies.js';
import type { WorkerMetrics } from './metrics.js';
import type { PollingWorkers } from './readiness.js';
import { createTracing, type Tracing } from './tracing.js';
import { WORKFLOW_INTERCEPTOR_MODULES, workflowSource } from './workflow-source.js';

interface RunWorkerOptions {
  config: Config;
  connection: NativeConnection;
  client: Client;
  metrics?: WorkerMetrics;
  /** Aborting it shuts the workers down gracefully (the process signals do so too). */
  signal?: AbortSignal;
  /** Overrides the dependencies built from config (tests). */
  deps?: ActivityDeps;
  /** Spans of activities and workflows; absent: off (the bundled workflow interceptors still need their sink). */
  tracing?: Tracing;
  /** Called once the workers are polling, with them (for the readiness checks). */
  onReady?: (workers: PollingWorkers) => void;
  /** How long a cached workflow's task waits for this process before any worker may take it (tests). */
  stickyQueueTimeoutMs?: number;
}

export async function runWorker(options: RunWorkerOptions): Promise<void> {
  const { config, connection, client, metrics, signal } = options;
  const deps = options.deps ?? createActivityDeps(config, client, metrics);
  // awaitJobCompletion stays on the main queue too, for polls scheduled there before polls had their own.
  const { uploadData, planRows, ...shortActivities } = createActivities(deps);
  const { awaitJobCompletion } = shortActivities;
  const tracing = options.tracing ?? createTracing(undefined);
  const source = workflowSource(config.worker.workflowBundlePath);
  const common = {
    connection,
    ...tracing.worker,
    // A prebuilt bundle has them already (and the SDK ignores modules beside one).
    ...(source.workflowsPath ? { interceptors: { workflowModules: WORKFLOW_INTERCEPTOR_MODULES } } : {}),
    namespace: config.temporal.namespace,
    ...deploymentOptions(config.worker.deployment),
    maxHeartbeatThrottleInterval: config.worker.heartbeatThrottleMs,
    ...(options.stickyQueueTimeoutMs ? { stickyQueueScheduleToStartTimeout: options.stickyQueueTimeoutMs } : {}),
  };

  const main = await Worker.create({
    ...common,
    ...source,
    taskQueue: config.temporal.taskQueue,
    activities: shortActivities,
    maxConcurrentActivityTaskExecutions: config.worker.maxConcurrentActivities,
  });
  const uploads = await Worker.create({
    ...common,
    taskQueue: uploadTaskQueue(config.temporal.taskQueue),
    activities: { uploadData, planRows },
    maxConcurrentActivityTaskExecutions: config.worker.maxConcurrentUploads,
  });
  const polls = await Worker.create({
    ...common,
    taskQueue: pollTaskQueue(config.temporal.taskQueue),
    activities: { awaitJobCompletion },
    maxConcurrentActivityTaskExecutions: config.worker.maxConcurrentPolls,
  });

  const stop = () => {
    for (const w of [main, uploads, polls]) if (w.getState() === 'RUNNING') w.shutdown();
  };
  const running = Promise.all([main.run(), uploads.run(), polls.run()]);
  // An abort while the workers were being created (bundling the workflows takes seconds) fired before
  // anyone listened: the demo whose import failed at once would then wait for these workers forever.
  if (signal?.aborted) stop();
  else signal?.addEventListener('abort', stop, { once: true });
  options.onReady?.({ main, uploads, polls });
  try {
    await running;
  } finally {
    signal?.removeEventListener('abort', stop);
    await deps.service.close();
  }
}

/**
 * Worker Versioning when a deployment is configured; nothing otherwise, so an
 * unversioned worker polls exactly as before. Every workflow is pinned: it
 * never replays another release's history (the ledger and the mapping lock
 * move by continuing as new, workflows/versioning.ts). The default declares
 * it, because the server refuses a behaviour named by an unversioned worker.
 */
function deploymentOptions(deployment: WorkerDeployment | undefined): Pick<WorkerOptions, 'workerDeploymentOptions'> {
  if (!deployment) return {};
  return {
    workerDeploymentOptions: { version: deployment, useWorkerVersioning: true, defaultVersioningBehavior: 'PINNED' },
  };
}
