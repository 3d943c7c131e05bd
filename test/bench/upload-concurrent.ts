/**
 * Benchmark child: several uploads of the same object at once in one process
 * (one worker's upload slots), each into its own job. Reports each upload's
 * time, so the parent can judge how fairly they share the service link, and
 * the process's memory growth across all of them.
 */
import { readTarget, report } from './bench-env.js';
import { createBenchUploader, sampleRss } from './upload-activity.js';

const MiB = 1024 * 1024;
const t = readTarget();
if (!t.jobIds?.length) throw new Error('BENCH_TARGET needs jobIds');

const uploader = createBenchUploader(t);
if (t.warmup) await uploader.upload(t.warmup, t.warmup.jobId);

const rss = sampleRss();
const started = performance.now();
const uploads = await Promise.all(
  t.jobIds.map(async (jobId) => {
    const result = await uploader.upload(t, jobId);
    return { jobId, bytes: result.bytesSent, seconds: (performance.now() - started) / 1000 };
  }),
);
const seconds = (performance.now() - started) / 1000;
const peakRss = rss.stop();
await uploader.close();

report({ uploads, seconds, rssBeforeMB: rss.before / MiB, peakRssMB: peakRss / MiB });
