#!/usr/bin/env node
// The installed `import-worker` command: the compiled CLI (`npm run build` writes dist/; `npm pack` runs it).
import { main } from '../dist/worker/cli/main.js';

process.exitCode = await main(process.argv);
