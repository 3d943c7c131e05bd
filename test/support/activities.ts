/**
 * Running one activity attempt where no Temporal server can run: the real
 * activity code under MockActivityEnvironment, with its heartbeats recorded.
 */
import type { Info } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';

export interface ActivityRun<R, H> {
  env: MockActivityEnvironment;
  heartbeats: H[];
  result: Promise<R>;
}

/** Runs one attempt of an activity, recording its heartbeats. */
export function runActivity<A, R, H = unknown>(
  fn: (input: A) => Promise<R>,
  input: A,
  info: Partial<Info> = {},
): ActivityRun<R, H> {
  // Failed attempts are what many tests expect: the SDK's WARN line for each would only be noise.
  const env = new MockActivityEnvironment({ activityId: fn.name, ...info }, { logger: new DefaultLogger('ERROR') });
  const heartbeats: H[] = [];
  env.on('heartbeat', (d: H) => heartbeats.push(d));
  const result = env.run(fn, input) as Promise<R>;
  return { env, heartbeats, result };
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
