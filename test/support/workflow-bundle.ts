/**
 * The product's workflow code bundled as the worker bundles it, once per test
 * file, with webpack's chatter kept out of the test log (errors still print).
 */
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOWS_SOURCE } from '../../worker/process/workflow-source.js';

const quietBundlerLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: (message: string) => process.stderr.write(`${message}\n`),
};

/** The bundle's code, for `workflowBundle: { code }` or a file WORKFLOW_BUNDLE_PATH names. */
export async function bundleWorkflows(): Promise<string> {
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_SOURCE, logger: quietBundlerLogger });
  return code;
}
