import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { Chaos, seededRandom } from './chaos.js';
import { type Simulator, startSimulator } from './server.js';
import { call, createJob, upload } from './test-client.js';

let sim: Simulator | undefined;
afterEach(() => sim?.close());

const BODY = Buffer.concat([Buffer.from('Account Name,Account Domain\n'), randomBytes(120 * 1024)]);
/** Every PUT read at 400 KB/s: two PUTs of one job overlap. */
const SLOW_PUTS = { seed: 1, rates: { throttleUpload: 1 }, throttleBytesPerSec: 400 * 1024 };

describe('lenient uploads', () => {
  it('accepts both complete bodies of two PUTs that began while the job was new, and records both', async () => {
    sim = await startSimulator({ processingMs: 20, lenientUploads: true, chaos: SLOW_PUTS });
    const { id } = await createJob(sim, { dataImportName: '[import:k1] accounts' });
    const answers = await Promise.all([upload(sim, id, BODY), upload(sim, id, BODY)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(sim.job(id)).toMatchObject({ uploads: 2, bytesReceived: BODY.length });
    const record = sim.record();
    expect(record.bodiesByJob[String(id)]).toHaveLength(2);
    expect(record.jobsByNameKey).toEqual({ k1: [String(id)] });
    expect(Object.values(record.jobsByContent)).toEqual([[String(id)]]);
  });

  it('is off by default: the second PUT to finish is refused', async () => {
    sim = await startSimulator({ processingMs: 20, chaos: SLOW_PUTS });
    const { id } = await createJob(sim);
    const statuses = (await Promise.all([upload(sim, id, BODY), upload(sim, id, BODY)])).map((a) => a.status);
    expect(statuses.sort()).toEqual([200, 400]);
    expect(sim.record().bodiesByJob[String(id)]).toHaveLength(1);
  });

  it('never accepts a PUT that began after the job left new', async () => {
    sim = await startSimulator({ processingMs: 5_000, lenientUploads: true });
    const { id } = await createJob(sim);
    expect((await upload(sim, id, BODY)).status).toBe(200);
    expect((await upload(sim, id, BODY)).status).toBe(400);
    expect(sim.job(id)?.uploads).toBe(1);
  });
});

describe('chaos', () => {
  it('a reset after the very last byte commits nothing', async () => {
    sim = await startSimulator({ processingMs: 20 });
    const { id } = await createJob(sim);
    sim.resetUploadAfter(BODY.length);
    await expect(upload(sim, id, BODY)).rejects.toThrow();
    expect(sim.job(id)).toMatchObject({ state: 'new', uploads: 0, acceptedBodies: [] });
  });

  it('a lost create answer leaves the job made; a chaos 429 is a short refusal with Retry-After, not the daily limit', async () => {
    sim = await startSimulator({ processingMs: 20, chaos: { seed: 3, rates: { loseAnswer: 1 } } });
    await expect(createJob(sim)).rejects.toThrow();
    expect(sim.jobs()).toHaveLength(1);
    sim.setChaos({ seed: 3, rates: { tooManyRequests: 1 } });
    const answer = await call(sim, 'GET', '/import/v1/jobs');
    expect(answer).toMatchObject({ status: 429, body: { errorCode: '429-100' } });
    expect(sim.chaosCounts()?.tooManyRequests).toBe(1);
    expect(sim.record().dailyLimitRefusals).toEqual({});
  });

  it('draws the same faults from the same seed', () => {
    const draws = (seed: number) => {
      const chaos = new Chaos({ seed, rates: { serverError: 0.3, resetUpload: 0.5, listLate: 0.5 } });
      return Array.from({ length: 20 }, (_, i) => chaos.draw(i % 2 ? 'submitData' : 'createJob', 1000));
    };
    expect(draws(7)).toEqual(draws(7));
    expect(draws(7)).not.toEqual(draws(8));
    const random = seededRandom(1);
    expect(Array.from({ length: 1000 }, random).every((x) => x >= 0 && x < 1)).toBe(true);
  });

  it('counts calls refused for a spent daily limit', async () => {
    sim = await startSimulator({ dailyLimits: { listJobs: 1 } });
    await call(sim, 'GET', '/import/v1/jobs');
    expect((await call(sim, 'GET', '/import/v1/jobs')).status).toBe(429);
    expect(sim.record().dailyLimitRefusals).toEqual({ listJobs: 1 });
  });
});
