import { TestWorkflowEnvironment } from '@temporalio/testing';
import { declaredDefault } from '../../temporal.config.js';
import { transportFailureReason } from '../shared/transport-errors.js';
import { freePort } from './free-port.js';
import { describeBinary, type FoundBinary, findTemporalBinary } from './temporal-binaries.js';

export class DemoSetupError extends Error {
  override readonly name = 'DemoSetupError';
}

export const NO_SERVER_HINT =
  'install one with `npm run setup:temporal`, point the demo at a Temporal CLI binary with TEMPORAL_SERVER_PATH=/path/to/temporal, or at a running server with TEMPORAL_ADDRESS=host:7233';

interface LocalTemporal {
  env: TestWorkflowEnvironment;
  address: string;
  namespace: string;
  /** One line: which server this is and where its binary came from. */
  origin: string;
  /** The Web UI, when this process started the server (otherwise TEMPORAL_UI_URL applies). */
  uiUrl?: string;
}

/** Finds the dev-server binary; undefined means the SDK downloads one. Replaceable in tests. */
type BinaryFinder = (env: NodeJS.ProcessEnv) => FoundBinary | undefined;

const findDevServer: BinaryFinder = (env) => findTemporalBinary('dev-server', env);

function firstLine(err: unknown): string {
  return ((err as Error)?.message ?? String(err)).split('\n')[0] ?? 'unknown error';
}

async function connectToRunning(address: string, namespace: string): Promise<LocalTemporal> {
  try {
    const env = await TestWorkflowEnvironment.createFromExistingServer({ address, namespace });
    return { env, address, namespace, origin: `running server at TEMPORAL_ADDRESS=${address}` };
  } catch (err) {
    throw new DemoSetupError(`cannot reach Temporal at TEMPORAL_ADDRESS=${address} (${transportFailureReason(err)})`);
  }
}

function findBinary(env: NodeJS.ProcessEnv, find: BinaryFinder): FoundBinary | undefined {
  try {
    return find(env);
  } catch (err) {
    // TEMPORAL_SERVER_PATH names something that is not an executable file.
    throw new DemoSetupError(`${firstLine(err)}; ${NO_SERVER_HINT}`);
  }
}

function startFailure(binary: FoundBinary | undefined, reason: string): DemoSetupError {
  if (binary) return new DemoSetupError(`cannot start the Temporal dev server ${binary.path} (${reason})`);
  if (/download/i.test(reason)) {
    return new DemoSetupError(
      `cannot start a local Temporal server: none is installed and its binary could not be downloaded (no network?); ${NO_SERVER_HINT}`,
    );
  }
  return new DemoSetupError(`cannot start a local Temporal server (${reason}); ${NO_SERVER_HINT}`);
}

/** TEMPORAL_NAMESPACE as given (the demo passes it on unchecked), else its declared default. */
function namespaceIn(env: NodeJS.ProcessEnv): string {
  return env.TEMPORAL_NAMESPACE?.trim() || declaredDefault('TEMPORAL_NAMESPACE');
}

/** Starts a dev server with its Web UI on a free port, from the binary found or the SDK's download. */
export async function startDevServer(
  env: NodeJS.ProcessEnv,
  find: BinaryFinder = findDevServer,
): Promise<LocalTemporal & { uiUrl: string }> {
  const namespace = namespaceIn(env);
  const binary = findBinary(env, find);
  // The UI's default port (frontend port + 1000) may be taken on a shared machine.
  const uiPort = await freePort();
  let started: TestWorkflowEnvironment;
  try {
    started = await TestWorkflowEnvironment.createLocal({
      server: {
        namespace,
        ui: true,
        uiPort,
        // Its WARN lines (a generated cluster id at start, failed polls while a Ctrl-C stops it) mean nothing in a demo.
        log: { format: 'pretty', level: 'error' },
        executable: binary ? { type: 'existing-path', path: binary.path } : undefined,
      },
    });
  } catch (err) {
    throw startFailure(binary, firstLine(err));
  }
  return {
    env: started,
    address: started.address,
    namespace,
    origin: describeBinary('dev-server', binary),
    uiUrl: `http://127.0.0.1:${uiPort}`,
  };
}

export async function startLocalTemporal(
  env: NodeJS.ProcessEnv,
  find: BinaryFinder = findDevServer,
): Promise<LocalTemporal> {
  const address = env.TEMPORAL_ADDRESS?.trim();
  if (address) return connectToRunning(address, namespaceIn(env));
  return startDevServer(env, find);
}
