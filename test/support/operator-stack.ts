/**
 * The whole product for the operator-path tests (test/end-to-end/): the full
 * stack (test/support/full-stack.ts) with one bucket and fast, unjittered
 * completion polls, shared by in-process workers and worker processes.
 */
import { createHash } from 'node:crypto';
import type { SimulatorOptions } from '../simulator/server.js';
import { type FullStack, startFullStack } from './full-stack.js';

export const STACK_BUCKET = 'operator-drops';

export type OperatorStack = FullStack;

interface StackOptions {
  simulator?: SimulatorOptions;
  /** Worker settings every worker of this stack gets (e.g. IMPORT_POLL_SCHEDULE). */
  workerEnv?: Record<string, string>;
}

export function startOperatorStack(options: StackOptions = {}): Promise<OperatorStack> {
  return startFullStack({
    bucket: STACK_BUCKET,
    name: 'operator',
    simulator: options.simulator,
    workerEnv: { IMPORT_POLL_SCHEDULE: '200ms', IMPORT_POLL_JITTER: '0', ...options.workerEnv },
  });
}

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
