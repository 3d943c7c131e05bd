/**
 * Benchmark child (a): S3 GetObject through the SDK into nothing. The
 * ceiling an upload can reach: it cannot move bytes faster than it reads them.
 */
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createS3Client } from '../../activities/s3/client.js';
import { S3Source } from '../../activities/s3/source.js';
import { readTarget, report } from './bench-env.js';

const t = readTarget();
const source = new S3Source(createS3Client({ endpoint: t.s3Endpoint, region: 'us-east-1', forcePathStyle: true }));
const cpuBefore = process.cpuUsage();
const started = performance.now();
let bytes = 0;
const body = await source.read(t.bucket, t.key, { etag: t.etag });
await pipeline(
  body,
  new Writable({
    write(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      callback();
    },
  }),
);
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
report({ bytes, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6 });
