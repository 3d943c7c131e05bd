/**
 * Global setup of `npm test`: transpiles the sources once for the run into
 * test-artifacts/ (compiled-source.ts says why) and hands every test file the
 * folder. When transpiling fails, nothing is handed over, and the processes
 * the tests start run the sources under tsx, as before.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { compileSources } from './compiled-source.js';

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts', import.meta.url));

export default async function compileOnce(project: TestProject): Promise<() => void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  // Inside the checkout, so that the copy's imports of packages resolve from its node_modules.
  const dir = mkdtempSync(join(ARTIFACTS, 'compiled-'));
  const build = async () => {
    try {
      await compileSources(dir);
      project.provide('compiledSourceDir', dir);
    } catch (err) {
      process.stderr.write(`compile-once: the tests' processes run under tsx: ${(err as Error).message}\n`);
    }
  };
  await build();
  project.onTestsRerun(build);
  return () => rmSync(dir, { recursive: true, force: true });
}
