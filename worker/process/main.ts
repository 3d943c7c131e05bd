/**
 * `npm start` (compiled) / `npm run worker` (from source): the worker
 * process, configured only by environment variables (worker-process.ts).
 */
import { runWorkerProcess } from './worker-process.js';

await runWorkerProcess();
