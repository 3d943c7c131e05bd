/**
 * Global setup of `npm test`: bundles the product's workflow code once for the
 * run (and once more with short heartbeat timeouts) and hands every test file
 * the bundles' paths (bundleWorkflows() in workflow-bundle.ts reads them), as
 * production ships one prebuilt bundle,
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
    /** The same with short heartbeat timeouts (short-heartbeat-timeouts.ts), for the dead-worker tests. */
    shortHeartbeatsBundlePath: string;
  }
}

export default async function bundleOnce(project: TestProject): Promise<() => void> {
  const dir = mkdtempSync(join(tmpdir(), 'workflow-bundle-'));
  const path = join(dir, 'workflow-bundle.js');
  const shortHeartbeatsPath = join(dir, 'workflow-bundle-short-heartbeats.js');
  const build = async () => {
    rmSync(path, { force: true });
    rmSync(shortHeartbeatsPath, { force: true });
    try {
      writeFileSync(path, await buildWorkflowBundle('product'));
      writeFileSync(shortHeartbeatsPath, await buildWorkflowBundle('short'));
    } catch {
      // Left to the files, which bundle themselves and fail with webpack's errors.
    }
  };
  await build();
  project.provide('workflowBundlePath', path);
  project.provide('shortHeartbeatsBundlePath', shortHeartbeatsPath);
  project.onTestsRerun(build);
  return () => rmSync(dir, { recursive: true, force: true });
}
