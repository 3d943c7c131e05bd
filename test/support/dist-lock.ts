/**
 * dist/ is one folder per checkout, and `npm run build` empties it first. Two
 * runs that build it at once (the compiled-package file under Node 20 and
 * Node 24, the soak) would see each other's half-written tree, so each holds
 * this lock from its build until it has read what it needs. A lock whose
 * holder has died is taken over; a live holder is waited for, within a bound.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const WAIT_MS = 10 * 60_000;

export async function lockDist(root: string): Promise<() => void> {
  const dir = join(root, 'test-artifacts', 'dist.lock');
  mkdirSync(join(root, 'test-artifacts'), { recursive: true });
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    try {
      mkdirSync(dir);
      writeFileSync(join(dir, 'pid'), String(process.pid));
      return () => rmSync(dir, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (!holderAlive(dir)) {
      rmSync(dir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`${dir} held for over ${WAIT_MS / 60_000} min by a live process`);
    await sleep(500);
  }
}

function holderAlive(dir: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(dir, 'pid'), 'utf8'));
  } catch {
    // Just made, its pid not written yet.
    return true;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
