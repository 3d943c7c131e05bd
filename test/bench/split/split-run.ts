/**
 * Benchmark child of bench:split: an import of one generated object as a
 * worker runs it, the planning pass (planObject, as the activity reads), then
 * each part's upload (uploadData regenerating that part's body from the plan)
 * into a job of its own. Prints the plan's parts and each pass's wall and CPU
 * seconds, and the RSS growth over the whole run.
 */
import { planObject } from '../../../activities/check-rows/plan-object.js';
import { detectDialect, type RowPlan } from '../../../activities/rows/index.js';
import { createS3Client } from '../../../activities/s3/client.js';
import { S3Source } from '../../../activities/s3/source.js';
import { readTarget, report, timed } from '../bench-env.js';
import { createJob } from '../simulator-jobs.js';
import { createBenchUploader, sampleRss } from '../upload-activity.js';

const MiB = 1024 * 1024;
const SAMPLE_BYTES = 64 * 1024;

const t = readTarget();
if (t.simulatorUrl === undefined) throw new Error('BENCH_TARGET needs simulatorUrl');
const maxPartBytes = Number(process.env.BENCH_MAX_PART_BYTES);
if (!Number.isSafeInteger(maxPartBytes) || maxPartBytes <= 0) throw new Error('BENCH_MAX_PART_BYTES must be set');
const s3 = new S3Source(createS3Client({ endpoint: t.s3Endpoint, region: 'us-east-1', forcePathStyle: true }));
const uploader = createBenchUploader(t);

async function plan(): Promise<RowPlan> {
  const sample = await s3.firstBytes(t.bucket, t.key, { etag: t.etag, bytes: SAMPLE_BYTES });
  const dialect = detectDialect(Buffer.from(sample), { complete: sample.length === t.sizeBytes });
  return planObject(s3, t, { dialect, checks: { entityType: 'Account' }, maxPartBytes });
}

const rss = sampleRss();
const planned = await timed(plan);
const rowPlan = planned.value;
const parts = [];
for (const part of rowPlan.parts) {
  const jobId = await createJob(t.simulatorUrl);
  const object = { key: t.key, etag: t.etag, sizeBytes: part.bytes };
  const sent = await timed(() => uploader.upload(object, jobId, rowPlan, { number: part.number, sha256: part.sha256 }));
  parts.push({ ...part, jobId, bytesSent: sent.value.bytesSent, seconds: sent.seconds, cpuSeconds: sent.cpuSeconds });
}
const peakRss = rss.stop();
await uploader.close();

report({
  body: rowPlan.body,
  rowsRead: rowPlan.rowsRead,
  rowsSent: rowPlan.rowsSent,
  rowsRejected: rowPlan.rowsRejected,
  plan: { seconds: planned.seconds, cpuSeconds: planned.cpuSeconds },
  parts,
  rssGrowthMiB: (peakRss - rss.before) / MiB,
});
