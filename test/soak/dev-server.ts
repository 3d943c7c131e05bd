/**
 * The Temporal CLI's dev server on a database file, so that the soak can
 * SIGKILL it and start it again on the same port and the same state.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { findTemporalBinary } from '../../worker/demo/temporal-binaries.js';

export interface DevServer {
  readonly address: string;
  readonly restarts: number;
  /** SIGKILL, then start again on the same database; resolves once it answers. */
  restart(downMs: number): Promise<void>;
  stop(): Promise<void>;
}

export interface DevServerOptions {
  port: number;
  httpPort: number;
  metricsPort: number;
  dbFile: string;
  logFile: string;
}

export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const binary = findTemporalBinary('dev-server');
  if (!binary) throw new Error('no Temporal dev server binary; run npm run setup:temporal');
  const log = createWriteStream(options.logFile, { flags: 'a' });
  const address = `127.0.0.1:${options.port}`;
  let child: ChildProcess | undefined;
  let restarts = 0;

  const launch = async () => {
    child = spawn(
      binary.path,
      [
        'server',
        'start-dev',
        '--headless',
        '--ip',
        '127.0.0.1',
        '--port',
        String(options.port),
        '--http-port',
        String(options.httpPort),
        '--metrics-port',
        String(options.metricsPort),
        '--db-filename',
        options.dbFile,
        '--log-level',
        'error',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    await waitUntilServing(address, child);
  };
  const kill = async () => {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };

  await launch();
  return {
    address,
    get restarts() {
      return restarts;
    },
    async restart(downMs) {
      await kill();
      await sleep(downMs);
      restarts += 1;
      await launch();
    },
    async stop() {
      await kill();
      log.end();
    },
  };
}

/** Polls the frontend for at most 60 s; fails early if the server exits. */
async function waitUntilServing(address: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the Temporal dev server exited with ${child.exitCode}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      await connection.workflowService.getSystemInfo({});
      await connection.close();
      return;
    } catch {
      await sleep(300);
    }
  }
  throw new Error(`the Temporal dev server did not answer on ${address} within 60 s`);
}
