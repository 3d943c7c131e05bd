/**
 * The worker process of worker/process/main.ts, with service time compressed
 * by the factor its first argument gives: the simulator ends jobs in
 * seconds, so the listing grace and the budget window shrink alike. A second
 * argument, when given, is the sweep lease in ms (how long a dead sweeper's
 * round is left to it), and a third the sticky-queue timeout in ms (how long
 * a workflow cached here waits for this process). Only tests start it
 * (worker-process.ts); production never compresses time.
 */
import { runWorkerProcess } from '../../worker/process/worker-process.js';

const timeCompression = Number(process.argv[2] ?? '1');
if (!Number.isFinite(timeCompression) || timeCompression < 1) {
  process.stderr.write(`worker-main: the time compression must be a number of at least 1, got ${process.argv[2]}\n`);
  process.exit(2);
}
const sweepLeaseMs = optionalMs(3, 'the sweep lease');
const stickyQueueTimeoutMs = optionalMs(4, 'the sticky-queue timeout');
await runWorkerProcess({ timeCompression, sweepLeaseMs, stickyQueueTimeoutMs });

/** A whole number of ms above 0 at argv[index]; '-' or nothing: the product's own. */
function optionalMs(index: number, what: string): number | undefined {
  const raw = process.argv[index];
  if (raw === undefined || raw === '-') return undefined;
  const ms = Number(raw);
  if (Number.isInteger(ms) && ms > 0) return ms;
  process.stderr.write(`worker-main: ${what} must be a whole number of ms above 0, got ${raw}\n`);
  process.exit(2);
}
