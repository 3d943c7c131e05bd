/**
 * `npm run worker` as an operator meets it: the real entry point in a child
 * process (worker/process/main.ts, from the run's transpiled copy of the
 * sources: test/support/compiled-source.ts). Bad configuration stops it with one line and exit code 2; a
 * Temporal server it cannot reach, with one line and exit code 1; the token
 * shows up in neither. Its stderr is not a terminal here, so every line,
 * the fatal one included, is JSON.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { findTemporalBinary } from '../../../worker/demo/temporal-binaries.js';
import { closedPort } from '../../support/closed-port.js';
import { nodeArgsFor } from '../../support/compiled-source.js';

const MAIN = fileURLToPath(new URL('../../../worker/process/main.ts', import.meta.url));
const TOKEN = 'worker-main-test-token-do-not-print';
const SERVICE = { COMPANY_DATA_BASE_URL: 'http://127.0.0.1:9', COMPANY_DATA_TOKEN: TOKEN };

function baseEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env };
}

interface LogLine {
  level: string;
  message: string;
  [key: string]: unknown;
}

/** The JSON lines of the output; the AWS SDK's plain Node-version notice is not ours. */
function logLines(output: string): LogLine[] {
  return output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
}

function runWorker(env: Record<string, string>) {
  const result = spawnSync(process.execPath, nodeArgsFor(MAIN), {
    env: baseEnv(env),
    encoding: 'utf8',
    timeout: 120_000,
  });
  const output = `${result.stdout}${result.stderr}`;
  return { status: result.status, lines: logLines(output), output };
}

describe('the worker entry point', () => {
  it('stops with one line naming the variable when the configuration is missing', () => {
    const run = runWorker({ COMPANY_DATA_TOKEN: TOKEN });
    expect(run.status).toBe(2);
    expect(run.lines).toEqual([
      {
        time: expect.any(String),
        level: 'FATAL',
        message: 'COMPANY_DATA_BASE_URL must be the service base URL, e.g. https://api.example.com; it is not set',
      },
    ]);
  });

  it('stops with one line when a value is malformed, without printing the token', () => {
    const run = runWorker({ ...SERVICE, COMPANY_DATA_BASE_URL: 'http://api.example.com' });
    expect(run.status).toBe(2);
    expect(run.lines).toHaveLength(1);
    expect(run.lines[0]?.message).toMatch(/^COMPANY_DATA_BASE_URL must be https/);
    expect(run.output).not.toContain(TOKEN);
  });

  it('names WORKER_METRICS_PORT when the port is taken', async () => {
    const busy = createServer();
    await new Promise<void>((done) => busy.listen(0, '0.0.0.0', done));
    const port = (busy.address() as { port: number }).port;
    try {
      const run = runWorker({
        ...SERVICE,
        WORKER_METRICS_PORT: String(port),
        WORKER_HEALTH_PORT: '0',
        TEMPORAL_ADDRESS: '127.0.0.1:1',
      });
      expect(run.status).toBe(2);
      expect(run.lines.at(-1)?.message).toBe(
        `WORKER_METRICS_PORT ${port} is already in use by another process; choose a free port, or 0 to turn metrics off`,
      );
    } finally {
      busy.close();
    }
  });

  it('names WORKER_HEALTH_PORT when its port is taken, or is the metrics port', { timeout: 180_000 }, async () => {
    const busy = createServer();
    await new Promise<void>((done) => busy.listen(0, '0.0.0.0', done));
    const port = (busy.address() as { port: number }).port;
    try {
      const taken = runWorker({ ...SERVICE, WORKER_METRICS_PORT: '0', WORKER_HEALTH_PORT: String(port) });
      expect(taken.status).toBe(2);
      expect(taken.lines.at(-1)?.message).toBe(
        `WORKER_HEALTH_PORT ${port} is already in use by another process; choose a free port, or 0 to turn the health endpoints off`,
      );
    } finally {
      busy.close();
    }
    const same = runWorker({ ...SERVICE, WORKER_METRICS_PORT: '9999', WORKER_HEALTH_PORT: '9999' });
    expect(same.status).toBe(2);
    expect(same.lines.at(-1)?.message).toBe(
      'WORKER_HEALTH_PORT must differ from WORKER_METRICS_PORT (the metrics exporter has a port of its own); both are 9999',
    );
  });

  it('refuses to start with one line when the token (its file or its variable) is empty, blank or more than a token', {
    timeout: 180_000,
  }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'worker-token-file-'));
    try {
      const cases: [string, string][] = [
        ['', 'is empty'],
        ['  \n\n', 'is empty'],
        [`Bearer ${TOKEN}\n`, 'holds spaces, line breaks or non-ASCII characters (not shown)'],
      ];
      for (const [content, problem] of cases) {
        const path = join(dir, 'token');
        writeFileSync(path, content);
        const run = runWorker({
          COMPANY_DATA_BASE_URL: SERVICE.COMPANY_DATA_BASE_URL,
          COMPANY_DATA_TOKEN_FILE: path,
          // Unreachable: a worker that got past its configuration would wait here and fail with exit 1.
          TEMPORAL_ADDRESS: '127.0.0.1:1',
          WORKER_CONNECT_TIMEOUT: '0',
          WORKER_METRICS_PORT: '0',
          WORKER_HEALTH_PORT: '0',
        });
        expect(run.status).toBe(2);
        expect(run.lines).toEqual([
          {
            time: expect.any(String),
            level: 'FATAL',
            message: `COMPANY_DATA_TOKEN_FILE must be a file holding the bearer token (visible ASCII characters, no spaces); ${path} ${problem}`,
          },
        ]);
        expect(run.output).not.toContain(TOKEN);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const pasted = runWorker({
      ...SERVICE,
      COMPANY_DATA_TOKEN: `Bearer ${TOKEN}`,
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      WORKER_CONNECT_TIMEOUT: '0',
      WORKER_METRICS_PORT: '0',
      WORKER_HEALTH_PORT: '0',
    });
    expect(pasted.status).toBe(2);
    expect(pasted.lines.map((l) => l.message)).toEqual([
      'COMPANY_DATA_TOKEN must be the bearer token (visible ASCII characters, no spaces); it holds spaces, line breaks or non-ASCII characters (not shown)',
    ]);
    expect(pasted.output).not.toContain(TOKEN);
  });

  it('refuses to start with one line when the token file cannot be read', { timeout: 180_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'worker-token-file-'));
    try {
      // A directory where the file should be: readable by anyone, root included, yet no token file.
      const run = runWorker({
        COMPANY_DATA_BASE_URL: SERVICE.COMPANY_DATA_BASE_URL,
        COMPANY_DATA_TOKEN_FILE: dir,
        TEMPORAL_ADDRESS: '127.0.0.1:1',
        WORKER_CONNECT_TIMEOUT: '0',
        WORKER_METRICS_PORT: '0',
        WORKER_HEALTH_PORT: '0',
      });
      expect(run.status).toBe(2);
      expect(run.lines).toHaveLength(1);
      expect(run.lines[0]?.message).toBe(
        `COMPANY_DATA_TOKEN_FILE must be a readable file (holding the bearer token); got ${JSON.stringify(dir)}`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names the Temporal target, TLS, API-key use and its three task queues at start, never a secret', () => {
    const run = runWorker({
      ...SERVICE,
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      TEMPORAL_API_KEY: 'temporal-api-key-do-not-print',
      NOTIFY_WEBHOOK_URL: 'https://hooks.example.com/services/T0/B0/webhook-path-do-not-print',
      WORKER_CONNECT_TIMEOUT: '0',
      WORKER_METRICS_PORT: '0',
      WORKER_HEALTH_PORT: '0',
    });
    expect(run.lines[0]).toMatchObject({
      level: 'INFO',
      message: 'Worker starting',
      temporal: '127.0.0.1:1',
      namespace: 'default',
      tls: true,
      apiKey: true,
      taskQueues: ['bulk-import', 'bulk-import-uploads', 'bulk-import-polls'],
      deployment: 'unversioned',
      traces: 'off',
      notifications: 'on',
    });
    expect(run.output).not.toContain('temporal-api-key-do-not-print');
    expect(run.output).not.toContain('webhook-path-do-not-print');
    expect(run.output).not.toContain(TOKEN);
  });

  it('names its Worker Deployment version at start, and stops with one line when only half of it is set', () => {
    const unreachable = {
      ...SERVICE,
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      WORKER_CONNECT_TIMEOUT: '0',
      WORKER_METRICS_PORT: '0',
      WORKER_HEALTH_PORT: '0',
    };
    const versioned = runWorker({ ...unreachable, WORKER_DEPLOYMENT_NAME: 'bulk-import', WORKER_BUILD_ID: 'v7' });
    expect(versioned.lines[0]).toMatchObject({
      message: 'Worker starting',
      deployment: { deploymentName: 'bulk-import', buildId: 'v7' },
    });
    const half = runWorker({ ...unreachable, WORKER_BUILD_ID: 'v7' });
    expect(half.status).toBe(2);
    expect(half.lines).toEqual([
      {
        time: expect.any(String),
        level: 'FATAL',
        message:
          'WORKER_DEPLOYMENT_NAME and WORKER_BUILD_ID must be set together (Worker Versioning) or both left unset; WORKER_BUILD_ID is set, WORKER_DEPLOYMENT_NAME is not',
      },
    ]);
  });

  it('says which Temporal address it cannot reach, without transport internals or the token', () => {
    for (const address of ['127.0.0.1:1', 'no-such-host.invalid:7233']) {
      const run = runWorker({
        ...SERVICE,
        TEMPORAL_ADDRESS: address,
        WORKER_CONNECT_TIMEOUT: '0',
        WORKER_METRICS_PORT: '0',
        WORKER_HEALTH_PORT: '0',
        LOG_LEVEL: 'DEBUG',
      });
      expect(run.status).toBe(1);
      expect(run.lines.at(-1)?.message).toMatch(
        new RegExp(
          `^Worker failed: cannot reach the Temporal server at ${address.replace(/\./g, '\\.')} \\((connection refused|host name not found)\\); set TEMPORAL_ADDRESS`,
        ),
      );
      expect(run.output).not.toMatch(/tonic|transport::/);
      expect(run.output).not.toContain(TOKEN);
    }
  });
});

describe('a worker started before its Temporal server', () => {
  const started: ChildProcess[] = [];
  afterEach(() => {
    for (const child of started.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  });

  it('retries with backoff, logging each try, and starts polling once the server is up', {
    timeout: 180_000,
  }, async () => {
    const port = await closedPort();
    const worker = spawn(process.execPath, nodeArgsFor(MAIN), {
      env: baseEnv({
        ...SERVICE,
        TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
        WORKER_CONNECT_TIMEOUT: '2m',
        WORKER_METRICS_PORT: '0',
        WORKER_HEALTH_PORT: '0',
      }),
    });
    started.push(worker);
    let stderr = '';
    const seen = (predicate: (lines: LogLine[]) => boolean) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (predicate(logLines(stderr))) resolve();
        };
        worker.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          check();
        });
        worker.on('exit', (code) => reject(new Error(`worker exited ${code}:\n${stderr}`)));
        check();
      });

    const retries = (lines: LogLine[]) => lines.filter((l) => l.message.startsWith('Temporal server not reachable'));
    await seen((lines) => retries(lines).length >= 2);
    const [first, second] = retries(logLines(stderr));
    expect(first).toMatchObject({
      level: 'WARN',
      temporal: `127.0.0.1:${port}`,
      attempt: 1,
      reason: 'connection refused',
    });
    expect(second?.retryInMs).toBeGreaterThan(first?.retryInMs as number);

    const binary = findTemporalBinary('dev-server');
    if (!binary) throw new Error('no Temporal dev server binary; run npm run setup:temporal');
    const server = spawn(
      binary.path,
      ['server', 'start-dev', '--headless', '--port', String(port), '--log-level', 'error'],
      {
        stdio: 'ignore',
      },
    );
    started.push(server);

    await seen((lines) => lines.some((l) => l.message === 'Worker polling'));
    // The uploads and polls workers run no workflows by design: the SDK's notice of it is not logged.
    expect(stderr).not.toContain('No workflows registered');
    const exited = new Promise<number | null>((done) => worker.on('exit', done));
    worker.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(logLines(stderr).at(-1)?.message).toBe('Worker stopped');
    expect(stderr).not.toContain(TOKEN);
  });
});
