/**
 * The whole product as an operator runs it, started one way for every test
 * that needs all of it: a real Temporal dev server (with its Web UI when
 * asked), s3rver, the service simulator, and in-process workers built from
 * the worker's own configuration (the environment variables of `npm start`)
 * exactly as worker/process/main.ts builds them. Worker processes
 * (test/support/worker-process.ts) take the same variables from workerEnv().
 * Every worker of a stack runs service time `timeCompression` times faster
 * than real time (default 300: the spec's 60 s poll ceiling is the stack's
 * 200 ms schedule, the 15 s listing grace 50 ms), because the simulator ends
 * jobs in seconds.
 *
 * The workflow code is bundled once per stack and handed to every worker by
 * WORKFLOW_BUNDLE_PATH, as production does, so a worker starts in seconds
 * instead of bundling again.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, makeTelemetryFilterString, Runtime } from '@temporalio/worker';
import { loadConfig } from '../../temporal.config.js';
import { type LocalS3, S3RVER_CREDENTIALS, startLocalS3 } from '../../worker/demo/local-s3.js';
import { startDevServer } from '../../worker/demo/local-temporal.js';
import { createActivityDeps } from '../../worker/process/dependencies.js';
import { runWorker } from '../../worker/process/run-worker.js';
import type { Tracing } from '../../worker/process/tracing.js';
import { DEMO_TOKENS, type Simulator, type SimulatorOptions, startSimulator } from '../simulator/server.js';
import { createDevServerWith, createEnvironment } from './temporal-server.js';
import { bundleWorkflows, type HeartbeatTimeouts } from './workflow-bundle.js';

/** Worker variables; `undefined` removes one the stack would set (e.g. COMPANY_DATA_TOKEN for client credentials). */
type WorkerVariables = Record<string, string | undefined>;

interface FullStackOptions {
  /** The bucket the stack creates and putObject writes to. */
  bucket: string;
  /** Prefix of the stack's task queue (a random suffix follows). */
  name: string;
  simulator?: SimulatorOptions;
  /** Worker settings every worker of this stack gets (e.g. IMPORT_POLL_SCHEDULE). */
  workerEnv?: WorkerVariables;
  /** A dev server with its Web UI on a free port, ignoring TEMPORAL_ADDRESS (the browser tests). */
  webUi?: boolean;
  /** A dev server of its own with these server settings (dynamic config), ignoring TEMPORAL_ADDRESS. */
  temporalDynamicConfig?: Record<string, string | number>;
  /** The level of the SDK's own log lines in this process (default WARN: worker state changes are noise). */
  sdkLogLevel?: 'WARN' | 'ERROR';
  /** Service time runs this many times faster than real time in every worker (default 300). */
  timeCompression?: number;
  /**
   * 'short': the workers' workflow bundle gives every activity a short heartbeat timeout
   * (short-heartbeat-timeouts.ts), so that Temporal notices a killed or frozen worker in seconds.
   */
  heartbeatTimeouts?: HeartbeatTimeouts;
}

const DEFAULT_TIME_COMPRESSION = 300;

export interface FullStack {
  env: TestWorkflowEnvironment;
  namespace: string;
  /** The Web UI's address, when `webUi` was asked for. */
  uiUrl?: string;
  s3: LocalS3;
  sim: Simulator;
  bucket: string;
  taskQueue: string;
  /** How many times faster than real time service time runs in this stack's workers (pass it to startWorkerProcess). */
  timeCompression: number;
  /** The worker's environment (as `npm start` reads it), with `extra` on top. */
  workerEnv(extra?: WorkerVariables): Record<string, string>;
  /** A worker in this process, built from workerEnv(extra), with `tracing` when given; resolves once it polls. */
  startWorker(extra?: WorkerVariables, tracing?: Tracing): Promise<InProcessWorker>;
  putObject(key: string, body: string | Uint8Array): Promise<void>;
  close(): Promise<void>;
}

interface InProcessWorker {
  stop(): Promise<void>;
}

interface Temporal {
  env: TestWorkflowEnvironment;
  namespace: string;
  uiUrl?: string;
}

async function startTemporal(webUi: boolean, dynamicConfig?: Record<string, string | number>): Promise<Temporal> {
  if (webUi) return startDevServer(process.env);
  const env = dynamicConfig ? await createDevServerWith(dynamicConfig) : await createEnvironment();
  return { env, namespace: env.namespace ?? 'default' };
}

export async function startFullStack(options: FullStackOptions): Promise<FullStack> {
  installSdkLogger(options.sdkLogLevel ?? 'WARN');
  const dir = mkdtempSync(join(tmpdir(), 'full-stack-'));
  const bundlePath = join(dir, 'workflow-bundle.js');
  const started = await Promise.allSettled([
    startTemporal(options.webUi ?? false, options.temporalDynamicConfig),
    startLocalS3({ buckets: [options.bucket] }),
    startSimulator(options.simulator),
    bundleWorkflows(options.heartbeatTimeouts),
  ] as const);
  const [temporalStart, s3Start, simStart, bundleStart] = started;
  if (
    temporalStart.status === 'rejected' ||
    s3Start.status === 'rejected' ||
    simStart.status === 'rejected' ||
    bundleStart.status === 'rejected'
  ) {
    // Stop what did start (s3rver is a child process that would outlive the test).
    await Promise.allSettled([
      temporalStart.status === 'fulfilled' && temporalStart.value.env.teardown(),
      s3Start.status === 'fulfilled' && s3Start.value.close(),
      simStart.status === 'fulfilled' && simStart.value.close(),
    ]);
    rmSync(dir, { recursive: true, force: true });
    throw started.map((r) => (r.status === 'rejected' ? r.reason : undefined)).find((e) => e !== undefined);
  }
  const [temporal, s3, sim] = [temporalStart.value, s3Start.value, simStart.value];
  const { env, namespace } = temporal;
  writeFileSync(bundlePath, bundleStart.value);
  const taskQueue = `${options.name}-${randomUUID()}`;
  const timeCompression = options.timeCompression ?? DEFAULT_TIME_COMPRESSION;
  const workers = new Set<InProcessWorker>();

  const workerEnv = (extra: WorkerVariables = {}): Record<string, string> =>
    definedOnly({
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: namespace,
      IMPORT_TASK_QUEUE: taskQueue,
      COMPANY_DATA_BASE_URL: sim.baseUrl,
      COMPANY_DATA_TOKEN: DEMO_TOKENS.importer,
      S3_ENDPOINT: s3.endpoint,
      AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
      AWS_REGION: 'us-east-1',
      WORKFLOW_BUNDLE_PATH: bundlePath,
      WORKER_METRICS_PORT: '0',
      WORKER_HEALTH_PORT: '0',
      // The simulator is on loopback and reads at once (at worst at its chaos throttle what the kernel buffers hold).
      IMPORT_DELIVERY_BOUND: '10s',
      ...options.workerEnv,
      ...extra,
    });

  return {
    env,
    namespace,
    uiUrl: temporal.uiUrl,
    s3,
    sim,
    bucket: options.bucket,
    taskQueue,
    timeCompression,
    workerEnv,
    async startWorker(extra, tracing) {
      const vars = workerEnv(extra);
      // The S3 client reads credentials from the AWS default chain, as in production.
      process.env.AWS_ACCESS_KEY_ID = vars.AWS_ACCESS_KEY_ID;
      process.env.AWS_SECRET_ACCESS_KEY = vars.AWS_SECRET_ACCESS_KEY;
      const config = loadConfig(vars, { needsService: true });
      const deps = createActivityDeps(config, env.client);
      const abort = new AbortController();
      let ready: () => void = () => undefined;
      const polling = new Promise<void>((resolve) => {
        ready = resolve;
      });
      const running = runWorker({
        config,
        connection: env.nativeConnection,
        client: env.client,
        signal: abort.signal,
        tracing,
        deps: { ...deps, settings: { ...deps.settings, timeCompression } },
        onReady: () => ready(),
      });
      await Promise.race([polling, running]);
      const worker: InProcessWorker = {
        async stop() {
          workers.delete(worker);
          abort.abort();
          await running;
        },
      };
      workers.add(worker);
      return worker;
    },
    async putObject(key, body) {
      await s3.client.send(new PutObjectCommand({ Bucket: options.bucket, Key: key, Body: Buffer.from(body) }));
    },
    async close() {
      await Promise.allSettled([...workers].map((w) => w.stop()));
      await sim.close();
      await s3.close();
      await env.teardown();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function definedOnly(vars: WorkerVariables): Record<string, string> {
  return Object.fromEntries(Object.entries(vars).filter((e): e is [string, string] => e[1] !== undefined));
}

/**
 * The SDK's own log lines at `level` and above. A test file runs in its own
 * process, so the runtime is installed here unless something already
 * installed one.
 */
function installSdkLogger(level: 'WARN' | 'ERROR'): void {
  try {
    Runtime.install({
      logger: new DefaultLogger(level),
      // Core's own lines through that logger (stderr) too, not straight to stdout: `bench:budget --json` owns stdout.
      telemetryOptions: { logging: { forward: {}, filter: makeTelemetryFilterString({ core: level }) } },
    });
  } catch {
    // Already installed: keep it.
  }
}
