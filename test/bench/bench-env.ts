/**
 * How the benchmark's parent hands a measurement to a child process: every
 * value travels in an environment variable, read back here with a clear error
 * when one is missing. S3 credentials go in the AWS default chain's variables,
 * so the children build their client exactly as the worker does.
 */
import { S3RVER_CREDENTIALS } from '../../worker/demo/local-s3.js';

export interface BenchTarget {
  s3Endpoint: string;
  bucket: string;
  key: string;
  etag: string;
  sizeBytes: number;
  simulatorUrl?: string;
  jobId?: string;
  parallelParts?: number;
  partSizeBytes?: number;
}

export function targetEnv(t: BenchTarget): Record<string, string> {
  const env: Record<string, string> = {
    AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    AWS_REGION: 'us-east-1',
    BENCH_TARGET: JSON.stringify(t),
  };
  return env;
}

export function readTarget(): BenchTarget {
  const text = process.env.BENCH_TARGET;
  if (!text) throw new Error('BENCH_TARGET is not set: this script is a child of test/bench/upload.ts, run that');
  return JSON.parse(text) as BenchTarget;
}

/** The one line a child prints on stdout: its measurement as JSON. */
export function report(result: object): void {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
