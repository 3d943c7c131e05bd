/**
 * The worker process of worker/process/main.ts, with service time compressed
 * by the factor its first argument gives: the simulator ends jobs in
 * seconds, so the listing grace and the budget window shrink alike. Only
 * tests start it (worker-process.ts); production never compresses time.
 */
import { runWorkerProcess } from '../../worker/process/worker-process.js';

const timeCompression = Number(process.argv[2] ?? '1');
if (!Number.isFinite(timeCompression) || timeCompression < 1) {
  process.stderr.write(`worker-main: the time compression must be a number of at least 1, got ${process.argv[2]}\n`);
  process.exit(2);
}
await runWorkerProcess({ timeCompression });
