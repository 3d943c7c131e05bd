/**
 * How the benchmark's parent hands a measurement to a child process: every
 * value travels in an environment variable, read back here with a clear error
 * when one is missing. S3 credentials go in the AWS default chain's variables,
 * so the children build their client exactly as the worker does.
 */
import type { ParallelParts } from '../../activities/s3/ranged-reader.js';
import { S3RVER_CREDENTIALS } from '../../worker/demo/local-s3.js';

/** One S3 object of the benchmark. */
export interface BenchObject {
  key: string;
  etag: string;
  sizeBytes: number;
}

export interface BenchTarget extends BenchObject {
  s3Endpoint: string;
  bucket: string;
  simulatorUrl?: string;
  jobId?: string;
  /** More jobs, for uploads of the same object at once (the concurrent run). */
  jobIds?: string[];
  parallelParts?: ParallelParts;
  partSizeBytes?: number;
  /** A small upload before measuring, so first-use costs (parsers, lazy modules) stay out of the figures. */
  warmup?: BenchObject & { jobId: string };
  /** The private CA the client trusts, for links with TLS. */
  caCertPath?: string;
}

export function targetEnv(t: BenchTarget): Record<string, string> {
  const env: Record<string, string> = {
    AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    AWS_REGION: 'us-east-1',
    BENCH_TARGET: JSON.stringify(t),
  };
  // Trusting a private CA through configuration, as a deployment behind one would.
  if (t.caCertPath) env.NODE_EXTRA_CA_CERTS = t.caCertPath;
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

/** Runs `work`, with its wall time and this process's CPU time in seconds. */
export function timed<T>(work: () => Promise<T>): Promise<{ value: T; seconds: number; cpuSeconds: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  return work().then((value) => {
    const cpu = process.cpuUsage(cpu0);
    return { value, seconds: (performance.now() - t0) / 1000, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
  });
}
