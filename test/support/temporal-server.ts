/**
 * The real Temporal server the real-server tests run on, found the one way
 * worker/demo/temporal-binaries.ts describes (environment variable, the project's
 * `.temporal/` install from `npm run setup:temporal`, PATH, else the SDK's
 * download). TEMPORAL_ADDRESS points them at a running server instead.
 *
 * Nothing here skips: a test that needs a server and cannot get one fails
 * with a line saying how to get one, in CI and on a laptop alike.
 */
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { findTemporalBinary, type TemporalBinaryKind } from '../../worker/demo/temporal-binaries.js';

function executableFor(kind: TemporalBinaryKind) {
  const found = findTemporalBinary(kind);
  return found ? ({ type: 'existing-path', path: found.path } as const) : undefined;
}

async function explainFailure<T>(what: string, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    throw new Error(
      `cannot start the ${what} (${(err as Error).message.split('\n')[0]}); run \`npm run setup:temporal\`, or set TEMPORAL_SERVER_PATH / TEMPORAL_TEST_SERVER_PATH to a binary, or TEMPORAL_ADDRESS to a running server`,
    );
  }
}

/** The Temporal CLI's dev server (a real server: Updates, Schedules, Reset), or TEMPORAL_ADDRESS. */
export async function createEnvironment(): Promise<TestWorkflowEnvironment> {
  const address = process.env.TEMPORAL_ADDRESS?.trim();
  if (address) return TestWorkflowEnvironment.createFromExistingServer({ address });
  return explainFailure('Temporal dev server', () =>
    TestWorkflowEnvironment.createLocal({ server: { executable: executableFor('dev-server') } }),
  );
}

/**
 * A dev server of its own with server settings (dynamic config values, e.g.
 * `limit.historyCount.suggestContinueAsNew`), so never the server
 * TEMPORAL_ADDRESS names.
 */
export async function createDevServerWith(
  dynamicConfig: Record<string, string | number>,
): Promise<TestWorkflowEnvironment> {
  const extraArgs = Object.entries(dynamicConfig).flatMap(([k, v]) => ['--dynamic-config-value', `${k}=${v}`]);
  return explainFailure('Temporal dev server', () =>
    TestWorkflowEnvironment.createLocal({ server: { executable: executableFor('dev-server'), extraArgs } }),
  );
}

/**
 * The SDK's time-skipping test server: timers pass instantly while the test
 * waits on a result. Use it only where long waits must pass and the feature
 * is supported (it does not deduplicate Updates as a real server does).
 */
export async function createTimeSkippingEnvironment(): Promise<TestWorkflowEnvironment> {
  return explainFailure('Temporal time-skipping test server', () =>
    TestWorkflowEnvironment.createTimeSkipping({ server: { executable: executableFor('test-server') } }),
  );
}
