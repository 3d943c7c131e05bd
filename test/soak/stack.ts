/**
 * Everything a soak runs on, all on 127.0.0.1: the simulator (lenient, with
 * chaos), s3rver behind a proxy that can cut GETs, a Temporal dev server on a
 * database file, and the compiled workers, each behind its own TCP proxy.
 */
import { randomBytes } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { freePort } from '../../worker/demo/free-port.js';
import { type LocalS3, S3RVER_CREDENTIALS, startLocalS3 } from '../../worker/demo/local-s3.js';
import type { BudgetedEndpoint } from '../../workflows/contracts/endpoints.js';
import { type S3Proxy, startS3Proxy } from '../activities/s3/s3-proxy.js';
import { type ChaosOptions, type Simulator, startSimulator } from '../simulator/server.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { type DevServer, startDevServer } from './dev-server.js';
import { SOAK_MAX_PART_BYTES } from './objects.js';
import type { SoakTimings } from './settle.js';
import { createWorker, type SoakWorker } from './workers.js';

export const BUCKET = 'soak-drops';

/** The workers' request timeout, poll schedule and delivery bound and the simulator's processing time (the settle's bound reads them). */
export const SOAK_TIMINGS: SoakTimings = {
  requestTimeoutMs: 10_000,
  // Longer than the longest freeze (80 s): a frozen worker's last bytes may sit in its own socket buffer that long.
  deliveryBoundMs: 120_000,
  pollScheduleMs: [1_000, 2_000, 4_000],
  processingMs: 1_000,
};
export const FEED_ID = 'soak';

export interface Stack {
  sim: Simulator;
  s3: LocalS3;
  s3Proxy: S3Proxy;
  server: DevServer;
  workers: SoakWorker[];
  /** Every worker polls (or has tried for 60 s behind its proxy). */
  workersReady: Promise<void>;
  client: () => Client;
  /** The environment of the CLI (Temporal directly, S3 through the proxy). */
  cliEnv: Record<string, string>;
  /** The compiled tree the workers and the CLI run from. */
  compiled: string;
  limits: Record<BudgetedEndpoint, number>;
  tokens: string[];
  rotateToken(): Promise<void>;
  close(): Promise<void>;
}

export interface StackOptions {
  seed: number;
  workers: number;
  dir: string;
  /** The compiled tree the workers and the CLI run from. */
  compiled: string;
  smallLimits: boolean;
  imports: number;
}

export function simulatorChaos(seed: number): ChaosOptions {
  return {
    seed,
    rates: {
      serverError: 0.03,
      tooManyRequests: 0.03,
      loseAnswer: 0.1,
      slowAnswer: 0.05,
      lateCreate: 0.1,
      listLate: 0.3,
      resetUpload: 0.15,
      throttleUpload: 0.3,
    },
    slowAnswerMaxMs: 20_000,
    lateCommitMaxMs: 10_000,
    listLateMaxMs: 15_000,
    throttleBytesPerSec: 192 * 1024,
  };
}

const newToken = () => `soak-token-${randomBytes(18).toString('base64')}`;

export async function startStack(o: StackOptions): Promise<Stack> {
  const writes = o.smallLimits ? o.imports * 2 + 10 : 1200;
  const reads = o.smallLimits ? 1500 : 3600;
  const limits = {
    createJob: writes,
    submitData: writes,
    jobStatus: reads,
    listJobs: reads,
    listSources: reads,
    activityTypes: reads,
    activityFields: reads,
  } as Record<BudgetedEndpoint, number>;
  const tokens = [newToken()];
  const sim = await startSimulator({
    tokens: { [tokens[0] as string]: { permissions: ['Import Data'] } },
    lenientUploads: true,
    chaos: simulatorChaos(o.seed),
    processingMs: SOAK_TIMINGS.processingMs,
    dailyLimits: limits,
  });
  const s3 = await startLocalS3({ buckets: [BUCKET] });
  const s3Proxy = await startS3Proxy(s3.endpoint);
  const [port, httpPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const server = await startDevServer({
    port,
    httpPort,
    metricsPort,
    dbFile: join(o.dir, 'temporal.db'),
    logFile: join(o.dir, 'temporal-server.log'),
  });

  const tokenFile = join(o.dir, 'service-token');
  writeFileSync(tokenFile, tokens[0] as string);
  const feedsFile = join(o.dir, 'feeds.json');
  writeFileSync(
    feedsFile,
    JSON.stringify({
      feeds: [
        {
          id: FEED_ID,
          bucket: BUCKET,
          prefix: 'nightly/',
          entityType: 'Account',
          listAction: 'insert',
          maxConcurrentImports: 3,
          schedule: { time: '03:00', timeZone: 'UTC' },
        },
      ],
    }),
  );
  const common = {
    S3_ENDPOINT: s3Proxy.endpoint,
    S3_FORCE_PATH_STYLE: 'true',
    AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    AWS_REGION: 'us-east-1',
    IMPORT_FEEDS_FILE: feedsFile,
    IMPORT_BUDGET_WRITE_DAILY: String(writes),
    IMPORT_BUDGET_READ_DAILY: String(reads),
  };
  const workerEnv = {
    ...common,
    COMPANY_DATA_BASE_URL: sim.baseUrl,
    COMPANY_DATA_TOKEN_FILE: tokenFile,
    COMPANY_DATA_REQUEST_TIMEOUT: `${SOAK_TIMINGS.requestTimeoutMs}ms`,
    UPLOAD_IDLE_TIMEOUT: '30s',
    IMPORT_DELIVERY_BOUND: `${SOAK_TIMINGS.deliveryBoundMs}ms`,
    IMPORT_POLL_SCHEDULE: SOAK_TIMINGS.pollScheduleMs.map((ms) => `${ms}ms`).join(','),
    IMPORT_JOB_TIMEOUT: '15m',
    IMPORT_MAX_PART_BYTES: String(SOAK_MAX_PART_BYTES),
    WORKER_METRICS_PORT: '0',
    WORKER_HEALTH_PORT: '0',
    WORKER_CONNECT_TIMEOUT: '30m',
    LOG_LEVEL: 'INFO',
  };
  const workers: SoakWorker[] = [];
  for (let i = 0; i < o.workers; i++) {
    workers.push(createWorker(i, await startTcpProxy(port), workerEnv, o.dir, o.compiled));
  }
  // Awaited by the caller beside its own setup (schedules, objects): they need no worker.
  const workersReady = Promise.all(workers.map((w) => w.start())).then(() => undefined);
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });

  return {
    sim,
    s3,
    s3Proxy,
    server,
    workers,
    workersReady,
    client: () => client,
    cliEnv: { ...common, TEMPORAL_ADDRESS: server.address },
    compiled: o.compiled,
    limits,
    tokens,
    async rotateToken() {
      const old = tokens.at(-1) as string;
      const next = newToken();
      tokens.push(next);
      sim.addToken(next);
      // As a sidecar writes it: a new file renamed over the old one.
      writeFileSync(`${tokenFile}.new`, next);
      renameSync(`${tokenFile}.new`, tokenFile);
      await new Promise((r) => setTimeout(r, 1_000));
      sim.expireToken(old);
    },
    async close() {
      for (const w of workers) w.thaw();
      await Promise.all(workers.map((w) => w.kill()));
      await connection.close().catch(() => undefined);
      await server.stop();
      await Promise.all(workers.map((w) => w.proxy.close()));
      await s3Proxy.close();
      await s3.close();
      await sim.close();
    },
  };
}
