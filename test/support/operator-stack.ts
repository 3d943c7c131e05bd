/**
 * The whole product for the operator-path tests (test/end-to-end/): the full
 * stack (test/support/full-stack.ts) with one bucket and fast, unjittered
 * completion polls, shared by in-process workers and worker processes.
 */
import type { SimulatorOptions } from '../simulator/server.js';
import { type FullStack, startFullStack } from './full-stack.js';
import type { HeartbeatTimeouts } from './workflow-bundle.js';

export { accountsCsv, canonicalParts, sha256 } from './accounts-csv.js';

export const STACK_BUCKET = 'operator-drops';

export type OperatorStack = FullStack;

interface StackOptions {
  simulator?: SimulatorOptions;
  /** Worker settings every worker of this stack gets (e.g. IMPORT_POLL_SCHEDULE). */
  workerEnv?: Record<string, string>;
  /** A dev server of its own with these server settings (dynamic config). */
  temporalDynamicConfig?: Record<string, string | number>;
  /** 'short': Temporal notices a killed or frozen worker in seconds (full-stack.ts). */
  heartbeatTimeouts?: HeartbeatTimeouts;
}

export function startOperatorStack(options: StackOptions = {}): Promise<OperatorStack> {
  return startFullStack({
    bucket: STACK_BUCKET,
    name: 'operator',
    simulator: options.simulator,
    temporalDynamicConfig: options.temporalDynamicConfig,
    heartbeatTimeouts: options.heartbeatTimeouts,
    workerEnv: { IMPORT_POLL_SCHEDULE: '200ms', IMPORT_POLL_JITTER: '0', ...options.workerEnv },
  });
}
