/**
 * Which Temporal server the real-server tests use. None can be downloaded on
 * the machines this project is built on, so they run only when one is named:
 *   TEMPORAL_TEST_SERVER_PATH=/path/to/temporal-test-server  (time-skipping; fastest)
 *   TEMPORAL_TEST_SERVER_PATH=/path/to/temporal              (the CLI's dev server)
 *   TEMPORAL_ADDRESS=host:7233                               (a running server)
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';

const serverPath = process.env.TEMPORAL_TEST_SERVER_PATH;
const serverAddress = process.env.TEMPORAL_ADDRESS;

/** The time-skipping test server: long timers pass instantly. */
export const timeSkipping =
  serverPath !== undefined && existsSync(serverPath) && path.basename(serverPath).includes('test-server');

export const serverAvailable = (serverPath !== undefined && existsSync(serverPath)) || serverAddress !== undefined;

/** Prints, once per test file, why its real-server tests are skipped and how to enable them. */
export function reportSkipIfNoServer(what: string): void {
  if (serverAvailable) return;
  console.log(
    `${what} skipped: no Temporal server here. Set TEMPORAL_TEST_SERVER_PATH to an existing temporal-test-server or temporal binary, or TEMPORAL_ADDRESS to a running server.`,
  );
}

export async function createEnvironment(): Promise<TestWorkflowEnvironment> {
  if (serverPath && existsSync(serverPath)) {
    const executable = { type: 'existing-path', path: serverPath } as const;
    return timeSkipping
      ? TestWorkflowEnvironment.createTimeSkipping({ server: { executable } })
      : TestWorkflowEnvironment.createLocal({ server: { executable } });
  }
  return TestWorkflowEnvironment.createFromExistingServer({ address: serverAddress });
}
