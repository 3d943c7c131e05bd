/**
 * The product's workflow code bundled as the worker bundles it, with
 * webpack's chatter kept out of the test log (errors still print), or with
 * short heartbeat timeouts (short-heartbeat-timeouts.ts) for the tests that
 * wait for Temporal to notice a dead worker. Under `npm test` the run's
 * bundles (test/support/bundle-once.ts) are read instead of bundling again in
 * every file.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import { inject } from 'vitest';
import { createTracing } from '../../worker/process/tracing.js';
import { WORKFLOW_INTERCEPTOR_MODULES, WORKFLOWS_SOURCE } from '../../worker/process/workflow-source.js';

const quietBundlerLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: (message: string) => process.stderr.write(`${message}\n`),
};

/**
 * The sink the bundle's tracing interceptors send workflow spans to, here
 * dropping them: a worker of this bundle passes it (runWorker does so itself).
 */
export const WORKFLOW_SINKS = createTracing(undefined).worker.sinks;

/** The product's heartbeat timeouts, or every one shortened (short-heartbeat-timeouts.ts). */
export type HeartbeatTimeouts = 'product' | 'short';

const SHORT_HEARTBEAT_TIMEOUTS_MODULE = fileURLToPath(new URL('./short-heartbeat-timeouts.ts', import.meta.url));

/** The bundle's code, for `workflowBundle: { code }` or a file WORKFLOW_BUNDLE_PATH names. */
export async function bundleWorkflows(heartbeats: HeartbeatTimeouts = 'product'): Promise<string> {
  const built = bundleOfThisRun(heartbeats);
  return built ? readFile(built, 'utf8') : buildWorkflowBundle(heartbeats);
}

/**
 * A file holding the bundle, for a worker process's WORKFLOW_BUNDLE_PATH: this run's
 * (bundle-once.ts) when there is one, else the bundle written into `dir` now.
 */
export async function workflowBundleFile(dir: string, heartbeats: HeartbeatTimeouts = 'product'): Promise<string> {
  const built = bundleOfThisRun(heartbeats);
  if (built) return built;
  const path = join(dir, 'workflow-bundle.js');
  await writeFile(path, await buildWorkflowBundle(heartbeats));
  return path;
}

/** Bundles the workflow code now (about 2 s of CPU). */
export async function buildWorkflowBundle(heartbeats: HeartbeatTimeouts = 'product'): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_SOURCE,
    workflowInterceptorModules:
      heartbeats === 'short'
        ? [...WORKFLOW_INTERCEPTOR_MODULES, SHORT_HEARTBEAT_TIMEOUTS_MODULE]
        : WORKFLOW_INTERCEPTOR_MODULES,
    logger: quietBundlerLogger,
  });
  return code;
}

/** The file bundle-once.ts wrote, if this runs in a vitest worker of a run that has one. */
function bundleOfThisRun(heartbeats: HeartbeatTimeouts): string | undefined {
  // inject() needs a vitest worker: the benchmarks import this file outside one.
  if (!process.env.VITEST_WORKER_ID) return undefined;
  const path = heartbeats === 'short' ? inject('shortHeartbeatsBundlePath') : inject('workflowBundlePath');
  return path && existsSync(path) ? path : undefined;
}
