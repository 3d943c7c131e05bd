/** Starts one emulated link (link-proxy.ts) in a child process and returns its port. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from '../processes.js';
import type { LinkSpec } from './link-proxy.js';

export interface RunningLink {
  port: number;
  stop(): Promise<void>;
}

export async function startLink(spec: LinkSpec): Promise<RunningLink> {
  const child = spawn(`${REPO_ROOT}node_modules/.bin/tsx`, ['test/bench/link/link-proxy.ts'], {
    cwd: REPO_ROOT,
    env: { ...process.env, LINK_SPEC: JSON.stringify(spec) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  };
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`the link proxy exited with code ${code} before listening`);
  });
  const listening = (async () => {
    for await (const line of createInterface({ input: child.stdout! })) {
      if (line.startsWith('{')) return (JSON.parse(line) as { port: number }).port;
    }
    throw new Error('the link proxy closed its output before listening');
  })();
  try {
    const port = await Promise.race([listening, exited]);
    child.stdout!.resume();
    return { port, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
