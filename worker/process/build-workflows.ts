/**
 * Bundles the workflow code once (part of `npm run build`), so a compiled
 * worker starts without webpack. Writes dist/workflow-bundle.js, where the
 * compiled worker looks by default, or the path given as the first argument.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { PREBUILT_BUNDLE, WORKFLOW_INTERCEPTOR_MODULES, WORKFLOWS_SOURCE } from './workflow-source.js';

const out = resolve(process.argv[2] ?? PREBUILT_BUNDLE);
const { code } = await bundleWorkflowCode({
  workflowsPath: WORKFLOWS_SOURCE,
  workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
});
await mkdir(dirname(out), { recursive: true });
await writeFile(out, code);
process.stdout.write(`Wrote ${out} (${(code.length / 1024 / 1024).toFixed(2)} MB)\n`);
