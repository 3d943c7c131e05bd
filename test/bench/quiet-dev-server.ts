/**
 * A Temporal dev server whose own output goes to stderr. The SDK's
 * createLocal lets the server print its banner on this process's stdout,
 * which would break `bench:budget --json` (one JSON object on stdout); with
 * TEMPORAL_ADDRESS set to this server the stack connects to it instead.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { freePort } from '../../worker/demo/free-port.js';
import { findTemporalBinary } from '../../worker/demo/temporal-binaries.js';

export interface QuietDevServer {
  address: string;
  stop(): Promise<void>;
}

export async function startQuietDevServer(): Promise<QuietDevServer> {
  const binary = findTemporalBinary('dev-server');
  if (!binary) throw new Error('no Temporal dev server binary: run `npm run setup:temporal` (or set TEMPORAL_ADDRESS)');
  const port = await freePort();
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--headless',
    '--log-level',
    'warn',
  ];
  const child = spawn(binary.path, args, { stdio: ['ignore', process.stderr, process.stderr] });
  const address = `127.0.0.1:${port}`;
  try {
    await untilServing(address, child);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    address,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** Until the server answers for the default namespace (it registers it after it starts listening). */
async function untilServing(address: string, child: ChildProcess): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the Temporal dev server exited with code ${child.exitCode}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await connection.workflowService.describeNamespace({ namespace: 'default' });
        return;
      } finally {
        await connection.close();
      }
    } catch {
      await sleep(200);
    }
  }
}
