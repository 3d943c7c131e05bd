/**
 * Benchmark child (c): the real uploadData activity, end to end, with the
 * real service client and S3 source. It samples its own resident memory to
 * show the upload's footprint does not grow with the file; with a warm-up
 * object in the target it uploads that first and measures after it.
 */
import { readTarget, report } from './bench-env.js';
import { createBenchUploader, sampleRss } from './upload-activity.js';

const MiB = 1024 * 1024;
const t = readTarget();
if (t.jobId === undefined) throw new Error('BENCH_TARGET needs jobId');

const uploader = createBenchUploader(t);
if (t.warmup) await uploader.upload(t.warmup, t.warmup.jobId);

const rss = sampleRss();
const cpuBefore = process.cpuUsage();
const started = performance.now();
const result = await uploader.upload(t, t.jobId);
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
const peakRss = rss.stop();
await uploader.close();

report({
  bytes: result.bytesSent,
  skipped: result.skipped,
  seconds,
  cpuSeconds: (cpu.user + cpu.system) / 1e6,
  rssBeforeMB: rss.before / MiB,
  peakRssMB: peakRss / MiB,
  maxRssMB: process.resourceUsage().maxRSS / 1024,
  warmedUp: t.warmup !== undefined,
});
