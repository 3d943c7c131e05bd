/**
 * The product's workflow code bundled as the worker bundles it, with
 * webpack's chatter kept out of the test log (errors still print). Under
 * `npm test` the run's one bundle (test/support/bundle-once.ts) is read
 * instead of bundling again in every file.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
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

/** The bundle's code, for `workflowBundle: { code }` or a file WORKFLOW_BUNDLE_PATH names. */
export async function bundleWorkflows(): Promise<string> {
  const built = bundleOfThisRun();
  return built ? readFile(built, 'utf8') : buildWorkflowBundle();
}

/** Bundles the workflow code now (about 2 s of CPU). */
export async function buildWorkflowBundle(): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_SOURCE,
    workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
    logger: quietBundlerLogger,
  });
  return code;
}

/** The file bundle-once.ts wrote, if this runs in a vitest worker of a run that has one. */
function bundleOfThisRun(): string | undefined {
  // inject() needs a vitest worker: the benchmarks import this file outside one.
  const path = process.env.VITEST_WORKER_ID ? inject('workflowBundlePath') : undefined;
  return path && existsSync(path) ? path : undefined;
}
