/**
 * Global setup of `npm test`: bundles the product's workflow code once for the
 * run and hands every test file the bundle's path (bundleWorkflows() in
 * workflow-bundle.ts reads it), as production ships one prebuilt bundle,
 * instead of bundling again in each of the twenty-odd files that start
 * workers (about 2 s of CPU each). In watch mode it bundles again before each
 * rerun. When bundling fails, no file is left, and each file bundles itself
 * and reports the failure as before.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildWorkflowBundle } from './workflow-bundle.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The file holding this run's workflow bundle (absent when bundling failed). */
    workflowBundlePath: string;
  }
}

export default async function bundleOnce(project: TestProject): Promise<() => void> {
  const dir = mkdtempSync(join(tmpdir(), 'workflow-bundle-'));
  const path = join(dir, 'workflow-bundle.js');
  const build = async () => {
    rmSync(path, { force: true });
    try {
      writeFileSync(path, await buildWorkflowBundle());
    } catch {
      // Left to the files, which bundle themselves and fail with webpack's errors.
    }
  };
  await build();
  project.provide('workflowBundlePath', path);
  project.onTestsRerun(build);
  return () => rmSync(dir, { recursive: true, force: true });
}
