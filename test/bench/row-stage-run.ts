/**
 * Benchmark child (d): an import's two passes over the links, as a worker
 * runs them: the planning pass (planObject, as the activity reads: every row
 * checked, nothing sent), then uploadData. A file the plan sends as it is
 * goes through the byte path (ranged reads, `auto` by default); any other
 * has its canonical body regenerated from the plan. Each pass's wall and CPU
 * seconds, and the RSS growth over both, measured after a warm-up of the same
 * kind on a small object.
 */

import { planObject } from '../../activities/check-rows/plan-object.js';
import { type DeclaredEncoding, detectDialect, type RowPlan } from '../../activities/rows/index.js';
import { createS3Client } from '../../activities/s3/client.js';
import { S3Source } from '../../activities/s3/source.js';
import { type BenchObject, readTarget, report, timed } from './bench-env.js';
import { createBenchUploader, sampleRss } from './upload-activity.js';

const MiB = 1024 * 1024;
const SAMPLE_BYTES = 64 * 1024;
/** The service's limit: a 1 GiB file is one part, as it is in production. */
const MAX_PART_BYTES = 5_000_000_000;

const t = readTarget();
if (t.jobId === undefined) throw new Error('BENCH_TARGET needs jobId');
const encoding = process.env.BENCH_ENCODING as DeclaredEncoding | undefined;
const s3 = new S3Source(createS3Client({ endpoint: t.s3Endpoint, region: 'us-east-1', forcePathStyle: true }));
const uploader = createBenchUploader(t);

async function plan(object: BenchObject): Promise<RowPlan> {
  const sample: Buffer[] = [];
  const end = Math.min(SAMPLE_BYTES, object.sizeBytes) - 1;
  for await (const chunk of await s3.read(t.bucket, object.key, { etag: object.etag, end })) sample.push(chunk);
  const dialect = detectDialect(Buffer.concat(sample), { encoding, complete: end + 1 === object.sizeBytes });
  const options = { dialect, checks: { entityType: 'Account' as const }, maxPartBytes: MAX_PART_BYTES };
  return planObject(s3, { bucket: t.bucket, key: object.key, etag: object.etag }, options);
}

async function upload(object: BenchObject, rowPlan: RowPlan, jobId: string) {
  if (rowPlan.body === 'original') return uploader.upload(object, jobId);
  return uploader.upload({ ...object, sizeBytes: rowPlan.parts[0]!.bytes }, jobId, rowPlan);
}

if (t.warmup) await upload(t.warmup, await plan(t.warmup), t.warmup.jobId);

const rss = sampleRss();
const planned = await timed(() => plan(t));
const sent = await timed(() => upload(t, planned.value, t.jobId!));
const peakRss = rss.stop();
await uploader.close();
const part = planned.value.parts[0];

report({
  body: planned.value.body,
  parts: planned.value.parts.length,
  rows: planned.value.rowsRead,
  bodyBytes: part?.bytes,
  bodySha256: planned.value.body === 'canonical' ? part?.sha256 : undefined,
  bytesSent: sent.value.bytesSent,
  plan: { seconds: planned.seconds, cpuSeconds: planned.cpuSeconds },
  upload: { seconds: sent.seconds, cpuSeconds: sent.cpuSeconds },
  rssBeforeMB: rss.before / MiB,
  peakRssMB: peakRss / MiB,
});
