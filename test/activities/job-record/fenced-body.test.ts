import { describe, expect, it } from 'vitest';
import { FenceRefused, fencedBody } from '../../../activities/job-record/fenced-body.js';

const bytes = (...values: number[]) => new Uint8Array(values);

async function drain(body: AsyncIterable<Uint8Array>, log: string[]): Promise<number[]> {
  const out: number[] = [];
  for await (const chunk of body) {
    log.push(`chunk ${chunk.byteLength}`);
    out.push(...chunk);
  }
  return out;
}

describe('fenced body', () => {
  it('holds back the tail across chunks until released', async () => {
    const log: string[] = [];
    const body = fencedBody([bytes(1, 2, 3), bytes(4, 5), bytes(6)], {
      contentLength: 6,
      tailBytes: 3,
      release: async () => {
        log.push('release');
        return true;
      },
      onTailSent: () => log.push('tail sent'),
    });
    expect(await drain(body, log)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(log).toEqual(['chunk 3', 'release', 'chunk 3', 'tail sent']);
  });

  it('ends short of the length when the fence refuses', async () => {
    const log: string[] = [];
    const body = fencedBody([bytes(1, 2, 3, 4)], { contentLength: 4, tailBytes: 1, release: async () => false });
    await expect(drain(body, log)).rejects.toBeInstanceOf(FenceRefused);
    expect(log).toEqual(['chunk 3']);
  });

  it('holds the whole of a body smaller than the tail, and refuses a source of the wrong length', async () => {
    const whole = fencedBody([bytes(7, 8)], { contentLength: 2, tailBytes: 64, release: async () => true });
    expect(await drain(whole, [])).toEqual([7, 8]);
    const short = fencedBody([bytes(1)], { contentLength: 2, tailBytes: 1, release: async () => true });
    await expect(drain(short, [])).rejects.toThrow(/ended after 1 of 2/u);
    const long = fencedBody([bytes(1, 2, 3)], { contentLength: 2, tailBytes: 1, release: async () => true });
    await expect(drain(long, [])).rejects.toThrow(/more than 2/u);
  });
});
