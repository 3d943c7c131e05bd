/**
 * A TCP port on 127.0.0.1 that nothing listens on, for a test that needs a
 * connection refused (or a server that is not up yet). freePort() would do
 * for a moment only: its ports come from the system's ephemeral range, from
 * which every server started with port 0 in a parallel test file (a Temporal
 * dev server's internal services among them) is handed its port, so within
 * seconds another process may answer there. This port lies below that range:
 * the system never hands it out, so only a process told to use it can take it.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Where ports are drawn from: above the well-known and common fixed ports, below Linux's default ephemeral range. */
const LOWEST = 20_000;

export async function closedPort(): Promise<number> {
  const below = ephemeralRangeStart();
  for (let tries = 0; tries < 50; tries++) {
    const port = LOWEST + Math.floor(Math.random() * (below - LOWEST));
    if (await isFree(port)) return port;
  }
  throw new Error(`no free port between ${LOWEST} and ${below} after 50 tries`);
}

function ephemeralRangeStart(): number {
  try {
    const [start] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const n = Number(start);
    if (Number.isInteger(n) && n > LOWEST + 1_000) return n;
  } catch {
    // Not Linux, or not readable: the default below.
  }
  return 32_768;
}

async function isFree(port: number): Promise<boolean> {
  const server = createServer();
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (listening) await new Promise((resolve) => server.close(resolve));
  return listening;
}
