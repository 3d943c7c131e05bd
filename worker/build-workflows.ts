/**
 * `npm run build:workflows`: bundles the workflow code once, so production
 * workers start without webpack (set WORKFLOW_BUNDLE_PATH to the output).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOWS_SOURCE } from './workflow-source.js';

const out = resolve(process.argv[2] ?? 'dist/workflow-bundle.js');
const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_SOURCE });
await mkdir(dirname(out), { recursive: true });
await writeFile(out, code);
process.stdout.write(
  `Wrote ${out} (${(code.length / 1024 / 1024).toFixed(2)} MB). Run the worker with WORKFLOW_BUNDLE_PATH=${out}\n`,
);
