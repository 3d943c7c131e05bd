import { fileURLToPath } from 'node:url';

/** The workflow bundle's entry: every workflow is exported from here. */
export const WORKFLOWS_SOURCE = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
