/**
 * uploadData under the service faults that used to cost a second upload, a
 * lost file or an endless retry (issue 9, holes 1-4): each runs through the
 * retries Temporal would make, against the simulator on a real socket.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { UploadDataInput } from '../../../workflows/contracts/activities.js';
import { until } from '../../simulator/test-client.js';
import {
  csvBytes,
  dataPutsTo,
  GatedS3Source,
  prepareUpload,
  runUpload,
  sha256,
  startWorld,
  type UploadWorld,
  uploadDeps,
  uploadWithRetries,
} from './environment.js';

let world: UploadWorld;

beforeAll(async () => {
  // The client waits 3 s for an answer once every byte is out; the activity's idle watchdog is far shorter.
  world = await startWorld({ clientResponseTimeoutMs: 3_000 });
});

afterAll(async () => {
  await world?.close();
});

beforeEach(() => world.sim.clearFaults());

const IDLE_MS = 300;
const deps = (over = {}) =>
  uploadDeps(world, { uploadIdleTimeoutMs: IDLE_MS, unconfirmedWaitMs: 3_000, unconfirmedPollMs: 100, ...over });

const prepare = (key: string, bytes: Buffer) => prepareUpload(world, key, bytes);

/** What the service saw of one job: data PUTs, accepted copies, and whether the accepted copy is the file. */
function seen(input: UploadDataInput, bytes: Buffer) {
  const job = world.sim.job(input.jobId)!;
  return {
    puts: dataPutsTo(world, input.jobId),
    accepted: job.uploads,
    byteExact: job.uploads > 0 ? job.sha256 === sha256(bytes) : undefined,
  };
}

describe('hole 1: an answer that comes after the idle limit', () => {
  it('waits for a late answer once every byte is out, instead of sending the file again', async () => {
    const bytes = csvBytes(2 * 1024 * 1024);
    const input = await prepare('late-answer.csv', bytes);
    // The service commits only when it answers, 4 idle limits after the last byte.
    world.sim.commitUploadOnAnswer(4 * IDLE_MS);

    const run = await uploadWithRetries(deps(), input);

    expect(run.failure).toBeUndefined();
    expect(run.result).toMatchObject({ skipped: false, bytesSent: bytes.length, state: 'processing' });
    expect(seen(input, bytes)).toEqual({ puts: 1, accepted: 1, byteExact: true });
  });

  it('asks an operator, sending nothing again, when no answer came and the job stays new', async () => {
    const bytes = csvBytes(1024 * 1024);
    const input = await prepare('no-answer.csv', bytes);
    // Past the client's response timeout, and the service commits only when it answers: nothing is taken.
    world.sim.commitUploadOnAnswer(5_000, { count: 4 });

    const run = await uploadWithRetries(deps(), input);

    expect(run.failure?.type).toBe('UploadUnconfirmed');
    expect(run.failure?.nonRetryable).toBe(true);
    expect(run.failure?.message).toContain(`all ${bytes.length} bytes`);
    expect(seen(input, bytes)).toEqual({ puts: 1, accepted: 0, byteExact: undefined });
  });

  it('takes the late commit as the upload when the job left new while the retry waited', async () => {
    const bytes = csvBytes(1024 * 1024);
    const input = await prepare('late-commit.csv', bytes);
    // Committed on receipt, answered after the client gave up waiting.
    world.sim.delayNext('submitData', 5_000);

    const run = await uploadWithRetries(deps(), input);

    expect(run.failure).toBeUndefined();
    expect(run.result).toMatchObject({ skipped: true, bytesSent: bytes.length, state: 'processing' });
    expect(seen(input, bytes)).toEqual({ puts: 1, accepted: 1, byteExact: true });
  });

  it('an attempt that overlaps one awaiting its answer waits for that answer instead of sending again', async () => {
    const bytes = csvBytes(2 * 1024 * 1024);
    const input = await prepare('overlap.csv', bytes);
    world.sim.commitUploadOnAnswer(1_000);
    const first = runUpload(deps(), input);
    // A heartbeat timeout starts attempt 2 while attempt 1 still waits; the server hands it attempt 1's last details.
    await until(() => first.heartbeats.some((h) => h.allBytesSent === true));

    const second = await uploadWithRetries(deps(), input, 4, first.heartbeats.at(-1), 2);
    await first.result;

    expect(second.result).toMatchObject({ skipped: true, bytesSent: bytes.length, state: 'processing' });
    expect(seen(input, bytes)).toEqual({ puts: 1, accepted: 1, byteExact: true });
  });
});

describe('hole 1: attempts that overlap mid-stream', () => {
  it('an attempt refused because an overlapping one got the file in first succeeds without a second copy', async () => {
    const bytes = csvBytes(2 * 1024 * 1024);
    const input = await prepare('overlap-mid-stream.csv', bytes);
    // Attempt 1's upload is taken half a second after its last byte; its own idle limit outlasts that.
    world.sim.commitUploadOnAnswer(500);
    const first = runUpload(deps({ uploadIdleTimeoutMs: 2_000 }), input);
    await until(() => first.heartbeats.some((h) => h.bytesSent === h.totalBytes));

    // Attempt 2 never got attempt 1's last heartbeat, finds the job new and sends too; its S3 read is slow,
    // so its PUT ends after attempt 1's upload was taken.
    const taken = until(() => world.sim.job(input.jobId)!.uploads === 1);
    const slowSource = new GatedS3Source(world.s3.client, taken);
    const second = await uploadWithRetries(deps({ s3: slowSource }), input, 4, undefined, 2);
    await first.result.catch(() => undefined);

    expect(second.failure).toBeUndefined();
    expect(second.result).toMatchObject({ skipped: true, state: 'processing' });
    expect(seen(input, bytes)).toEqual({ puts: 2, accepted: 1, byteExact: true });
  });
});

describe('hole 2: job states in other spellings', () => {
  it.each(['New', 'NEW'])('uploads to a job whose state reads %s', async (spelled) => {
    const bytes = csvBytes(300_000);
    const input = await prepare(`spelled-${spelled}.csv`, bytes);
    world.sim.spellStates({ new: spelled });

    const run = await uploadWithRetries(deps(), input);

    expect(run.result).toMatchObject({ skipped: false, bytesSent: bytes.length });
    expect(seen(input, bytes)).toEqual({ puts: 1, accepted: 1, byteExact: true });
  });

  it.each(['queued', 'created'])('fails clearly, sending nothing, on the unknown state %s', async (spelled) => {
    const bytes = csvBytes(300_000);
    const input = await prepare(`unknown-${spelled}.csv`, bytes);
    world.sim.spellStates({ new: spelled });

    const run = await uploadWithRetries(deps(), input);

    expect(run.failure?.type).toBe('UnexpectedJobState');
    expect(run.failure?.nonRetryable).toBe(true);
    expect(run.failure?.message).toContain(JSON.stringify(spelled));
    expect(seen(input, bytes)).toEqual({ puts: 0, accepted: 0, byteExact: undefined });
  });
});

describe('hole 3: an answer before the body ends', () => {
  it('is no success: the service took part of the file', async () => {
    const bytes = csvBytes(8 * 1024 * 1024);
    const input = await prepare('early-answer.csv', bytes);
    world.sim.answerUploadEarly(64 * 1024);

    const run = await uploadWithRetries(deps(), input);

    expect(run.result).toBeUndefined();
    expect(run.failure?.type).toBe('UploadIncomplete');
    expect(run.failure?.nonRetryable).toBe(true);
    expect(seen(input, bytes)).toMatchObject({ puts: 1, accepted: 1, byteExact: false });
  });
});

describe('hole 4: a PUT refused on its headers, the connection closed', () => {
  it.each([
    { status: 401, type: 'Unauthorized' },
    { status: 403, type: 'Forbidden' },
    { status: 404, type: 'NotFound' },
    { status: 413, type: 'BadRequest' },
    { status: 429, type: 'DailyLimitReached' },
  ])('keeps the service answer $status ($type) and sends once', async ({ status, type }) => {
    const bytes = csvBytes(16 * 1024 * 1024);
    const input = await prepare(`refused-${status}.csv`, bytes);
    world.sim.refuseUploadOnHeaders(status, { count: 4 });

    const run = await uploadWithRetries(deps(), input);

    expect(run.failure?.type).toBe(type);
    expect(run.failure?.nonRetryable).toBe(true);
    expect(run.failure?.message).toContain(`HTTP ${status}`);
    expect(seen(input, bytes)).toEqual({ puts: 1, accepted: 0, byteExact: undefined });
  });

  it('keeps a refusal that comes only after the wait for it, while the body flows', async () => {
    const bytes = csvBytes(16 * 1024 * 1024);
    const input = await prepare('refused-slowly.csv', bytes);
    // The status check answers at once, so the wait before the body is short (answerGraceMs); the
    // refusal takes 300 ms, and meets a body already flowing into a connection about to close.
    world.sim.delayNext('submitData', 300);
    world.sim.refuseUploadOnHeaders(403, { count: 4 });

    const run = await uploadWithRetries(deps(), input);

    expect(run.failure?.type).toBe('Forbidden');
    expect(run.failure?.message).toContain('HTTP 403');
    expect(seen(input, bytes)).toEqual({ puts: 1, accepted: 0, byteExact: undefined });
  });
});
