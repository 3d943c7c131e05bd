/**
 * Where the worker's workflow code comes from. Compiled (dist/), a prebuilt
 * bundle sits beside the worker (`npm run build` writes it), so a start does
 * not run webpack; from source (tsx, tests), the workflows are bundled at
 * start. WORKFLOW_BUNDLE_PATH overrides both.
 */
import { existsSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkerOptions } from '@temporalio/worker';

const HERE = fileURLToPath(import.meta.url);

/** The workflow bundle's entry, in this module's own form: index.ts from source, index.js compiled. */
export const WORKFLOWS_SOURCE = fileURLToPath(new URL(`../../workflows/index${extname(HERE)}`, import.meta.url));

/**
 * The workflow interceptor modules of every bundle, prebuilt or bundled at
 * start: the import workflows' tracing (its file says why it is always there).
 */
export const WORKFLOW_INTERCEPTOR_MODULES = [
  fileURLToPath(new URL(`../../workflows/tracing-interceptors${extname(HERE)}`, import.meta.url)),
];

/** dist/workflow-bundle.js when this module runs compiled; a path that does not exist from source. */
export const PREBUILT_BUNDLE = fileURLToPath(new URL('../../workflow-bundle.js', import.meta.url));

type WorkflowSource = Pick<WorkerOptions, 'workflowsPath' | 'workflowBundle'>;

export function workflowSource(bundlePath: string | undefined): WorkflowSource {
  const codePath = bundlePath ?? (existsSync(PREBUILT_BUNDLE) ? PREBUILT_BUNDLE : undefined);
  return codePath ? { workflowBundle: { codePath } } : { workflowsPath: WORKFLOWS_SOURCE };
}

/** For the start-up line. */
export function describeWorkflowSource(source: WorkflowSource): string {
  if (source.workflowBundle && 'codePath' in source.workflowBundle) return `bundle ${source.workflowBundle.codePath}`;
  return `bundled at start from ${source.workflowsPath}`;
}
