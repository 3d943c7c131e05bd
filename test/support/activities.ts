/**
 * Running one activity attempt where no Temporal server can run: the real
 * activity code under MockActivityEnvironment, with its heartbeats recorded.
 */
import type { Info } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger, type LogEntry } from '@temporalio/worker';

export interface ActivityRun<R, H> {
  env: MockActivityEnvironment;
  heartbeats: H[];
  /** What the activity logged at INFO and above, with the attributes the SDK adds (workflowId, activityType). */
  logs: LogEntry[];
  result: Promise<R>;
}

/** Runs one attempt of an activity, recording its heartbeats. */
export function runActivity<A, R, H = unknown>(
  fn: (input: A) => Promise<R>,
  input: A,
  info: Partial<Info> = {},
): ActivityRun<R, H> {
  const logs: LogEntry[] = [];
  // Recorded, and only errors printed: failed attempts are what many tests expect, and the SDK's WARN line
  // for each would only be noise.
  const logger = new DefaultLogger('INFO', (entry) => {
    logs.push(entry);
    if (entry.level === 'ERROR') process.stderr.write(`${entry.message} ${JSON.stringify(entry.meta)}\n`);
  });
  const env = new MockActivityEnvironment({ activityId: fn.name, ...info }, { logger });
  const heartbeats: H[] = [];
  env.on('heartbeat', (d: H) => heartbeats.push(d));
  const result = env.run(fn, input) as Promise<R>;
  return { env, heartbeats, logs, result };
}

/** The ApplicationFailure `p` rejects with; fails the test on anything else. */
export async function failureOf(p: Promise<unknown>): Promise<ApplicationFailure> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ApplicationFailure) return e;
    throw new Error(`expected an ApplicationFailure, got ${String(e)}`);
  }
  throw new Error('expected the activity to fail, but it succeeded');
}
