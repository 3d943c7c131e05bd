import { CancelledFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failureOf } from '../../support/activities.js';
import {
  BUCKET,
  csvBytes,
  dataPutsTo,
  prepareUpload,
  runUpload,
  sha256,
  startWorld,
  type UploadWorld,
  uploadDeps,
} from './environment.js';

let world: UploadWorld;

beforeAll(async () => {
  world = await startWorld();
});

afterAll(async () => {
  await world?.close();
});

const prepare = (key: string, bytes: Buffer) => prepareUpload(world, key, bytes);

const dataPuts = (jobId: string) => dataPutsTo(world, jobId);

describe('uploadData streams the S3 object into the job', () => {
  it.each([
    { reader: 'one sequential GET', parallelParts: 1, reads: 1 },
    // s3rver, like S3, honours Range: one GET per 64 KiB part, none of them a probe or a whole-object read.
    { reader: 'four parallel ranged GETs', parallelParts: 4, reads: Math.ceil(1_000_003 / (64 * 1024)) },
  ])('uploads the file byte for byte with $reader', async ({ parallelParts, reads }) => {
    const bytes = csvBytes(1_000_003);
    const input = await prepare(`exact-${parallelParts}.csv`, bytes);
    const readsBefore = world.source.reads.length;

    let counted = 0;
    const deps = uploadDeps(world, { parallelParts, partSizeBytes: 64 * 1024, onBytes: (n) => (counted += n) });
    const { result } = runUpload(deps, input);

    expect(await result).toEqual({
      skipped: false,
      bytesSent: bytes.length,
      state: 'processing',
      apiCalls: { jobStatus: 1, submitData: 1 },
    });
    const job = world.sim.job(input.jobId)!;
    expect(job.sha256).toBe(sha256(bytes));
    expect(job.bytesReceived).toBe(bytes.length);
    expect(job.uploads).toBe(1);
    expect(job.listAction).toBe('noop');
    expect(counted).toBe(bytes.length);
    const gets = world.source.reads.slice(readsBefore).filter((r) => r.key === input.key);
    expect(gets).toHaveLength(reads);
    if (parallelParts > 1) expect(gets.every((r) => r.end !== undefined && r.end - r.start! < 64 * 1024)).toBe(true);
  });

  it('heartbeats growing progress while it streams', async () => {
    // Larger than loopback socket buffers can absorb, so the stall is met mid-stream (once every byte is with
    // the socket, only the response timeout applies: seen once on a loaded machine with 24 MiB).
    const bytes = csvBytes(64 * 1024 * 1024);
    const input = await prepare('progress.csv', bytes);
    // The service stops reading after 2 MiB for a while: the upload is visibly in progress.
    world.sim.stallUploadAfter(2 * 1024 * 1024);

    const attempt = runUpload(uploadDeps(world, { heartbeatIntervalMs: 10, uploadIdleTimeoutMs: 500 }), input);
    await failureOf(attempt.result);

    const sent = attempt.heartbeats.map((h) => h.bytesSent);
    expect(attempt.heartbeats.every((h) => h.totalBytes === bytes.length)).toBe(true);
    expect(sent[0]).toBe(0);
    expect(sent.some((n) => n > 0 && n < bytes.length)).toBe(true);
    expect(sent).toEqual([...sent].sort((a, b) => a - b));
  });

  it('logs the start and the end of the upload with the job, bytes and rate', async () => {
    const bytes = csvBytes(300_000);
    const input = await prepare('logged.csv', bytes);
    const attempt = runUpload(uploadDeps(world), input);
    await attempt.result;
    const info = attempt.logs.filter((l) => l.level === 'INFO');
    expect(info.map((l) => l.message)).toEqual(['Upload started', 'Upload finished']);
    expect(info[0]?.meta).toMatchObject({ jobId: input.jobId, bytes: bytes.length, workflowId: expect.any(String) });
    expect(info[1]?.meta).toMatchObject({ jobId: input.jobId, bytes: bytes.length });
    expect(info[1]?.meta?.megabytesPerSecond).toBeGreaterThan(0);
  });

  it('reports the whole file in its last heartbeat', async () => {
    const bytes = csvBytes(300_000);
    const input = await prepare('last-beat.csv', bytes);
    const attempt = runUpload(uploadDeps(world), input);
    await attempt.result;
    expect(attempt.heartbeats.at(-1)).toEqual({
      bytesSent: bytes.length,
      totalBytes: bytes.length,
    });
  });

  it('stops reading S3 and sending when the activity is cancelled mid-stream', async () => {
    const bytes = csvBytes(24 * 1024 * 1024);
    const input = await prepare('cancel.csv', bytes);
    world.sim.stallUploadAfter(1024 * 1024);
    const opened = world.source.opened.length;

    const attempt = runUpload(uploadDeps(world), input);
    attempt.env.on('heartbeat', (h: { bytesSent: number }) => {
      if (h.bytesSent > 0) attempt.env.cancel();
    });

    await expect(attempt.result).rejects.toBeInstanceOf(CancelledFailure);
    const reads = world.source.opened.slice(opened);
    expect(reads).toHaveLength(1);
    expect(reads[0]!.destroyed).toBe(true);
    expect(world.sim.job(input.jobId)!.state).toBe('new');
    expect(world.sim.job(input.jobId)!.uploads).toBe(0);
  });

  it('fails a stalled upload retryably with UploadStalled and leaves the job new', async () => {
    const bytes = csvBytes(24 * 1024 * 1024);
    const input = await prepare('stall.csv', bytes);
    world.sim.stallUploadAfter(1024 * 1024);

    const attempt = runUpload(uploadDeps(world, { uploadIdleTimeoutMs: 300 }), input);

    const err = await failureOf(attempt.result);
    expect(err.type).toBe('UploadStalled');
    expect(err.nonRetryable).toBe(false);
    expect(err.message).toContain('no byte moved');
    expect(world.sim.job(input.jobId)!.state).toBe('new');
  });
});

describe('uploadData sends an accepted file exactly once', () => {
  it('retries a connection reset mid-upload and then uploads once', async () => {
    const bytes = csvBytes(2 * 1024 * 1024);
    const input = await prepare('reset.csv', bytes);
    world.sim.resetUploadAfter(256 * 1024);

    const first = await failureOf(runUpload(uploadDeps(world), input).result);
    expect(first.nonRetryable).toBe(false);
    expect(world.sim.job(input.jobId)!.state).toBe('new');

    const second = await runUpload(uploadDeps(world), input, { attempt: 2 }).result;
    expect(second).toMatchObject({ skipped: false, bytesSent: bytes.length, state: 'processing' });
    const job = world.sim.job(input.jobId)!;
    expect(job.uploads).toBe(1);
    expect(job.sha256).toBe(sha256(bytes));
  });

  it('skips the upload on retry when the service accepted it but the answer was lost', async () => {
    const bytes = csvBytes(200_000);
    const input = await prepare('dropped-answer.csv', bytes);
    world.sim.applyThenDrop('submitData');

    const first = await failureOf(runUpload(uploadDeps(world), input).result);
    expect(first.nonRetryable).toBe(false);

    const second = await runUpload(uploadDeps(world), input, { attempt: 2 }).result;
    expect(second).toEqual({ skipped: true, bytesSent: 0, state: 'processing', apiCalls: { jobStatus: 1 } });
    expect(world.sim.job(input.jobId)!.uploads).toBe(1);
    expect(dataPuts(input.jobId)).toBe(1);
  });
});

describe('uploadData reads only the inspected version of the file', () => {
  it('fails with SourceChanged, sending nothing, when the object was overwritten after inspection', async () => {
    const input = await prepare('overwritten.csv', csvBytes(100_000));
    await world.put('overwritten.csv', csvBytes(100_001));

    const err = await failureOf(runUpload(uploadDeps(world), input).result);

    expect(err.type).toBe('SourceChanged');
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toContain(`s3://${BUCKET}/overwritten.csv`);
    expect(dataPuts(input.jobId)).toBe(0);
  });

  it('fails with SourceChanged when the object was overwritten after inspection (ranged reads)', async () => {
    const input = await prepare('overwritten-ranged.csv', csvBytes(500_000));
    await world.put('overwritten-ranged.csv', csvBytes(500_001));

    const deps = uploadDeps(world, { parallelParts: 4, partSizeBytes: 64 * 1024 });
    const err = await failureOf(runUpload(deps, input).result);

    expect(err.type).toBe('SourceChanged');
    expect(world.sim.job(input.jobId)!.uploads).toBe(0);
  });
});
