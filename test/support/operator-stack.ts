/**
 * The whole product as an operator runs it, for the operator-path tests: a
 * real Temporal dev server, s3rver, the service simulator, and the worker's
 * own configuration (the environment variables of `npm start`), shared by
 * in-process workers (runWorker) and worker processes (worker/process/main.ts).
 *
 * The workflow code is bundled once per stack and handed to every worker by
 * WORKFLOW_BUNDLE_PATH, as production does, so a worker process starts in
 * seconds instead of bundling again.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '../../temporal.config.js';
import { type LocalS3, S3RVER_CREDENTIALS, startLocalS3 } from '../../worker/demo/local-s3.js';
import { runWorker } from '../../worker/process/run-worker.js';
import { WORKFLOWS_SOURCE } from '../../worker/process/workflow-source.js';
import { DEMO_TOKENS, type Simulator, type SimulatorOptions, startSimulator } from '../simulator/server.js';
import { createEnvironment } from './temporal-server.js';

export const STACK_BUCKET = 'operator-drops';

export interface OperatorStack {
  env: TestWorkflowEnvironment;
  s3: LocalS3;
  sim: Simulator;
  taskQueue: string;
  /** The worker's environment (as `npm start` reads it), with `extra` on top. */
  workerEnv(extra?: Record<string, string>): Record<string, string>;
  /** A worker in this process, built from workerEnv(extra) exactly as worker/process/main.ts builds it. */
  startWorker(extra?: Record<string, string>): Promise<InProcessWorker>;
  putObject(key: string, body: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

export interface InProcessWorker {
  stop(): Promise<void>;
}

export interface StackOptions {
  simulator?: SimulatorOptions;
  /** Worker settings every worker of this stack gets (e.g. IMPORT_POLL_SCHEDULE). */
  workerEnv?: Record<string, string>;
}

export async function startOperatorStack(options: StackOptions = {}): Promise<OperatorStack> {
  quietRuntime();
  const dir = mkdtempSync(join(tmpdir(), 'operator-stack-'));
  const bundlePath = join(dir, 'workflow-bundle.js');
  const started = await Promise.allSettled([
    createEnvironment(),
    startLocalS3({ buckets: [STACK_BUCKET] }),
    startSimulator(options.simulator),
    bundleWorkflowCode({ workflowsPath: WORKFLOWS_SOURCE, logger: quietBundlerLogger }),
  ] as const);
  const [envStart, s3Start, simStart, bundleStart] = started;
  if (
    envStart.status === 'rejected' ||
    s3Start.status === 'rejected' ||
    simStart.status === 'rejected' ||
    bundleStart.status === 'rejected'
  ) {
    // Stop what did start (s3rver is a child process that would outlive the test).
    await Promise.allSettled([
      envStart.status === 'fulfilled' && envStart.value.teardown(),
      s3Start.status === 'fulfilled' && s3Start.value.close(),
      simStart.status === 'fulfilled' && simStart.value.close(),
    ]);
    rmSync(dir, { recursive: true, force: true });
    throw started.map((r) => (r.status === 'rejected' ? r.reason : undefined)).find((e) => e !== undefined);
  }
  const [env, s3, sim] = [envStart.value, s3Start.value, simStart.value];
  writeFileSync(bundlePath, bundleStart.value.code);
  const taskQueue = `operator-${randomUUID()}`;
  const workers = new Set<InProcessWorker>();

  const workerEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
    TEMPORAL_ADDRESS: env.address,
    TEMPORAL_NAMESPACE: env.namespace ?? 'default',
    IMPORT_TASK_QUEUE: taskQueue,
    COMPANY_DATA_BASE_URL: sim.baseUrl,
    COMPANY_DATA_TOKEN: DEMO_TOKENS.importer,
    S3_ENDPOINT: s3.endpoint,
    AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    AWS_REGION: 'us-east-1',
    WORKFLOW_BUNDLE_PATH: bundlePath,
    WORKER_METRICS_PORT: '0',
    IMPORT_POLL_SCHEDULE: '200ms',
    IMPORT_POLL_JITTER: '0',
    ...options.workerEnv,
    ...extra,
  });

  return {
    env,
    s3,
    sim,
    taskQueue,
    workerEnv,
    async startWorker(extra) {
      const vars = workerEnv(extra);
      // The S3 client reads credentials from the AWS default chain, as in production.
      process.env.AWS_ACCESS_KEY_ID = vars.AWS_ACCESS_KEY_ID;
      process.env.AWS_SECRET_ACCESS_KEY = vars.AWS_SECRET_ACCESS_KEY;
      const config = loadConfig(vars, { needsService: true });
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
      await s3.client.send(new PutObjectCommand({ Bucket: STACK_BUCKET, Key: key, Body: body }));
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

/**
 * The in-process workers' SDK lines at WARN and above only (worker state
 * changes are noise in a test log). A test file runs in its own process, so
 * the runtime is installed here unless something already installed one.
 */
function quietRuntime(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed: keep it.
  }
}

const quietBundlerLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: (message: string) => process.stderr.write(`${message}\n`),
};

/** Account CSV bytes of about `bytes` bytes: a header row, then numbered rows (deterministic). */
export function accountsCsv(bytes: number, header = 'Account Name,Account Domain'): Buffer {
  const rows: string[] = [`${header}\n`];
  let size = rows[0]!.length;
  for (let i = 0; size < bytes; i++) {
    const row = `Company ${i},company-${i}.example.com\n`;
    rows.push(row);
    size += row.length;
  }
  return Buffer.from(rows.join(''));
}

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
