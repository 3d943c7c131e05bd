/**
 * An S3-compatible server on loopback (s3rver), for the local demo and tests.
 * s3rver accepts only the S3RVER/S3RVER key pair, needs path-style URLs, and
 * stores the SDK's aws-chunked framing inside objects unless checksums are
 * limited to when required (see ENVIRONMENT.md).
 *
 * It runs in a child process started with --openssl-legacy-provider: s3rver
 * encrypts ListObjectsV2 continuation tokens with single DES, which Node 20's
 * OpenSSL 3 refuses otherwise (every paged listing answers 500).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { S3Client } from '@aws-sdk/client-s3';
import { silenceAwsNodeVersionWarning } from '../shared/aws-node-warning.js';

export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

export interface LocalS3 {
  endpoint: string;
  client: S3Client;
  close(): Promise<void>;
}

interface LocalS3Options {
  /** 0 (the default) picks a free port. */
  port?: number;
  buckets: string[];
}

export function s3ClientFor(endpoint: string): S3Client {
  silenceAwsNodeVersionWarning();
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: S3RVER_CREDENTIALS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

const SERVER_SCRIPT = `
const S3rver = require(process.env.S3RVER_MODULE);
const options = JSON.parse(process.env.S3RVER_OPTIONS);
new S3rver(options).run().then(
  (address) => console.log(JSON.stringify({ port: address.port })),
  (err) => { console.error(err.message); process.exit(1); },
);
`;

async function readPort(child: ChildProcess): Promise<number> {
  const lines = createInterface({ input: child.stdout! });
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`s3rver exited with code ${code} before listening`);
  });
  const listening = (async () => {
    for await (const line of lines) {
      if (line.startsWith('{')) return (JSON.parse(line) as { port: number }).port;
    }
    throw new Error('s3rver closed its output before listening');
  })();
  return Promise.race([listening, exited]);
}

export async function startLocalS3(options: LocalS3Options): Promise<LocalS3> {
  const directory = mkdtempSync(join(tmpdir(), 's3rver-'));
  const serverOptions = {
    address: '127.0.0.1',
    port: options.port ?? 0,
    silent: true,
    directory,
    configureBuckets: options.buckets.map((name) => ({ name })),
  };
  const child = spawn(process.execPath, ['--openssl-legacy-provider', '-e', SERVER_SCRIPT], {
    env: {
      PATH: process.env.PATH,
      S3RVER_MODULE: createRequire(import.meta.url).resolve('s3rver'),
      S3RVER_OPTIONS: JSON.stringify(serverOptions),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // Recorded from the start: a terminal's Ctrl-C reaches the child with the demo, so it may have exited
  // before close() is called, and a listener added then would wait for an event that already fired.
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let port: number;
  try {
    port = await readPort(child);
  } catch (err) {
    child.kill();
    rmSync(directory, { recursive: true, force: true });
    throw err;
  }
  const endpoint = `http://127.0.0.1:${port}`;
  const client = s3ClientFor(endpoint);
  return {
    endpoint,
    client,
    async close() {
      client.destroy();
      if (child.exitCode === null && child.signalCode === null) child.kill();
      await exited;
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
