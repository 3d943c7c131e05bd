/**
 * Where the Temporal server binaries come from, found one way for the demo,
 * the tests and `npm run setup:temporal`:
 *   1. the environment variable (TEMPORAL_SERVER_PATH for the CLI's dev
 *      server, TEMPORAL_TEST_SERVER_PATH for the time-skipping test server);
 *   2. the project's own install in `.temporal/bin/` (npm run setup:temporal);
 *   3. the PATH;
 *   4. nothing found: the SDK downloads one (works only with internet).
 */
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type TemporalBinaryKind = 'dev-server' | 'test-server';

interface BinarySpec {
  envVar: string;
  fileName: string;
}

export const TEMPORAL_BINARIES: Record<TemporalBinaryKind, BinarySpec> = {
  'dev-server': { envVar: 'TEMPORAL_SERVER_PATH', fileName: 'temporal' },
  'test-server': { envVar: 'TEMPORAL_TEST_SERVER_PATH', fileName: 'temporal-test-server' },
};

/** The project's git-ignored install folder: `<project>/.temporal`. */
export const PROJECT_INSTALL_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../.temporal');

export interface FoundBinary {
  path: string;
  /** Where it was found, for the one line that says so. */
  source: 'environment' | 'project' | 'PATH';
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(fileName: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, fileName);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

class TemporalBinaryError extends Error {
  override readonly name = 'TemporalBinaryError';
}

/**
 * Finds a binary, or undefined when the SDK must download one. A path named in
 * the environment that is not an executable file is an error, not a fallback:
 * the operator asked for that binary.
 */
export function findTemporalBinary(
  kind: TemporalBinaryKind,
  env: NodeJS.ProcessEnv = process.env,
): FoundBinary | undefined {
  const { envVar, fileName } = TEMPORAL_BINARIES[kind];
  const named = env[envVar]?.trim();
  if (named) {
    if (!isExecutable(named)) throw new TemporalBinaryError(`${envVar}=${named} is not an executable file`);
    return { path: named, source: 'environment' };
  }
  const installed = path.join(PROJECT_INSTALL_DIR, 'bin', fileName);
  if (isExecutable(installed)) return { path: installed, source: 'project' };
  const fromPath = onPath(fileName, env);
  return fromPath ? { path: fromPath, source: 'PATH' } : undefined;
}

/** One line: which binary, and where it came from. */
export function describeBinary(kind: TemporalBinaryKind, found: FoundBinary | undefined): string {
  const { envVar } = TEMPORAL_BINARIES[kind];
  if (!found) return `${kind}: none found; the Temporal SDK will try to download one`;
  const from = {
    environment: `from ${envVar}`,
    project: 'from the project install, npm run setup:temporal',
    PATH: 'from PATH',
  }[found.source];
  return `${kind}: ${found.path} (${from})`;
}
