/**
 * The worker process of worker/process/main.ts, with service time compressed
 * by the factor its first argument gives: the simulator ends jobs in
 * seconds, so the listing grace and the budget window shrink alike. Its
 * second argument, when given, is the sweep lease in milliseconds. Only
 * tests start it (worker-process.ts); production never compresses time.
 */
import { runWorkerProcess } from '../../worker/process/worker-process.js';

const timeCompression = Number(process.argv[2] ?? '1');
if (!Number.isFinite(timeCompression) || timeCompression < 1) {
  process.stderr.write(`worker-main: the time compression must be a number of at least 1, got ${process.argv[2]}\n`);
  process.exit(2);
}
const sweepLeaseMs = process.argv[3] === undefined ? undefined : Number(process.argv[3]);
if (sweepLeaseMs !== undefined && !(Number.isFinite(sweepLeaseMs) && sweepLeaseMs > 0)) {
  process.stderr.write(`worker-main: the sweep lease must be a positive number of ms, got ${process.argv[3]}\n`);
  process.exit(2);
}
await runWorkerProcess({ timeCompression, ...(sweepLeaseMs === undefined ? {} : { sweepLeaseMs }) });
