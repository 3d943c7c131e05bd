/**
 * Benchmark child (c): the real uploadData activity, end to end, under
 * MockActivityEnvironment, with the real service client and S3 source. It
 * samples its own resident memory to show the upload's footprint does not
 * grow with the file.
 */

import { MockActivityEnvironment } from '@temporalio/testing';
import { InMemoryBudgetGate } from '../../activities/budget/in-memory-gate.js';
import { createS3Client } from '../../activities/s3/client.js';
import { S3Source } from '../../activities/s3/source.js';
import { ServiceClient } from '../../activities/service/client.js';
import { createTokenSource } from '../../activities/service/token-source.js';
import { makeUploadData } from '../../activities/upload-data.js';
import { Secret } from '../../temporal.config.js';
import type { UploadDataInput, UploadDataResult } from '../../workflows/policy/activity-contracts.js';
import { DEMO_TOKENS } from '../simulator/server.js';
import { readTarget, report } from './bench-env.js';

const MiB = 1024 * 1024;
const t = readTarget();
if (t.simulatorUrl === undefined || t.jobId === undefined) throw new Error('BENCH_TARGET needs simulatorUrl and jobId');

const service = new ServiceClient({
  baseUrl: t.simulatorUrl,
  tokens: createTokenSource({ kind: 'env', token: new Secret(DEMO_TOKENS.importer) }),
});
const uploadData = makeUploadData({
  service,
  s3: new S3Source(createS3Client({ endpoint: t.s3Endpoint, region: 'us-east-1', forcePathStyle: true })),
  budget: new InMemoryBudgetGate(),
  uploadIdleTimeoutMs: 60_000,
  partSizeBytes: t.partSizeBytes ?? 8 * MiB,
  parallelParts: t.parallelParts ?? 1,
});
const env = new MockActivityEnvironment({ activityId: 'bench-upload' });

// memoryUsage.rss() only: the full memoryUsage() walks the heap and would show up in the upload's CPU.
let peakRss = process.memoryUsage.rss();
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
}, 10);

const rssBefore = process.memoryUsage.rss();
const cpuBefore = process.cpuUsage();
const started = performance.now();
const input: UploadDataInput = {
  tenant: 'bench',
  jobId: t.jobId,
  bucket: t.bucket,
  key: t.key,
  etag: t.etag,
  sizeBytes: t.sizeBytes,
  listAction: 'noop',
};
const result = (await env.run(uploadData, input)) as UploadDataResult;
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage.rss());
await service.close();

report({
  bytes: result.bytesSent,
  skipped: result.skipped,
  seconds,
  cpuSeconds: (cpu.user + cpu.system) / 1e6,
  rssBeforeMB: rssBefore / MiB,
  peakRssMB: peakRss / MiB,
  maxRssMB: process.resourceUsage().maxRSS / 1024,
});
