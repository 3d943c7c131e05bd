/**
 * The demo's Temporal: a running server named by TEMPORAL_ADDRESS, else a dev
 * server started from the binary at TEMPORAL_SERVER_PATH, else one the SDK
 * downloads. Where nothing can be downloaded (no network), the failure is
 * one line that says how to point the demo at a server or a binary.
 */
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { transportFailureReason } from '../transport-errors.js';

export class DemoSetupError extends Error {
  override readonly name = 'DemoSetupError';
}

export const NO_SERVER_HINT =
  'point the demo at a running server with TEMPORAL_ADDRESS=host:7233, or at a Temporal CLI binary with TEMPORAL_SERVER_PATH=/path/to/temporal';

export interface LocalTemporal {
  env: TestWorkflowEnvironment;
  address: string;
  namespace: string;
  /** The Web UI, when this process started the server (otherwise TEMPORAL_UI_URL applies). */
  uiUrl?: string;
}

function firstLine(err: unknown): string {
  return ((err as Error)?.message ?? String(err)).split('\n')[0] ?? 'unknown error';
}

export async function startLocalTemporal(env: NodeJS.ProcessEnv): Promise<LocalTemporal> {
  const address = env.TEMPORAL_ADDRESS?.trim();
  const namespace = env.TEMPORAL_NAMESPACE?.trim() || 'default';
  if (address) {
    try {
      const existing = await TestWorkflowEnvironment.createFromExistingServer({ address, namespace });
      return { env: existing, address, namespace };
    } catch (err) {
      throw new DemoSetupError(`cannot reach Temporal at TEMPORAL_ADDRESS=${address} (${transportFailureReason(err)})`);
    }
  }

  const serverPath = env.TEMPORAL_SERVER_PATH?.trim();
  let started: TestWorkflowEnvironment;
  try {
    started = await TestWorkflowEnvironment.createLocal({
      server: {
        namespace,
        ui: true,
        executable: serverPath ? { type: 'existing-path', path: serverPath } : undefined,
      },
    });
  } catch (err) {
    const reason = firstLine(err);
    if (serverPath) {
      throw new DemoSetupError(`cannot start the Temporal server at TEMPORAL_SERVER_PATH=${serverPath} (${reason})`);
    }
    if (/download/i.test(reason)) {
      throw new DemoSetupError(
        `cannot start a local Temporal server: its binary could not be downloaded (no network?); ${NO_SERVER_HINT}`,
      );
    }
    throw new DemoSetupError(`cannot start a local Temporal server (${reason}); ${NO_SERVER_HINT}`);
  }
  const port = Number(started.address.split(':').at(-1));
  // The dev server serves its UI on the frontend port + 1000 unless told otherwise.
  return { env: started, address: started.address, namespace, uiUrl: `http://127.0.0.1:${port + 1000}` };
}
