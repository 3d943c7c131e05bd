#!/usr/bin/env node
// The installed `import-worker` command: runs the TypeScript CLI through tsx, no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./cli.ts');
process.exitCode = await main(process.argv);
