/**
 * The ranged reader's held bytes (activities/s3/held-bytes.ts): a part's bytes
 * come out in order, as Buffers of their own, and a block is reused only once
 * the PUT has taken a copy of everything in it.
 */
import { describe, expect, it } from 'vitest';
import { type Block, BlockPool, PartBytes } from '../../../activities/s3/held-bytes.js';

const bytesOf = (length: number, seed: number) => Buffer.from(Array.from({ length }, (_, i) => (i * 7 + seed) % 251));

function takeAll(part: PartBytes): Buffer[] {
  const out: Buffer[] = [];
  for (let b = part.shift(); b !== undefined; b = part.shift()) out.push(b);
  return out;
}

/** A pool that tells which blocks it handed out and got back. */
class CountingPool extends BlockPool {
  handedOut = 0;
  returned: Block[] = [];
  override take(): Block {
    this.handedOut++;
    return super.take();
  }
  override give(block: Block): void {
    this.returned.push(block);
    super.give(block);
  }
}

describe('PartBytes', () => {
  it('gives the bytes back in order, across blocks, whatever the chunk sizes', () => {
    const part = new PartBytes(new BlockPool());
    const chunks = [bytesOf(16_384, 1), bytesOf(70_000, 2), bytesOf(1, 3), bytesOf(200_000, 4)];
    for (const chunk of chunks) part.push(chunk, false);
    part.seal();
    expect(Buffer.concat(takeAll(part)).equals(Buffer.concat(chunks))).toBe(true);
    expect(part.empty).toBe(true);
  });

  it('keeps the order when bytes are taken while they arrive, and a chunk passes through between blocks', () => {
    const part = new PartBytes(new BlockPool());
    const chunks = Array.from({ length: 40 }, (_, i) => bytesOf(5_000 + i * 997, i));
    const out: Buffer[] = [];
    chunks.forEach((chunk, i) => {
      part.push(chunk, i % 7 === 0);
      if (i % 3 === 0) out.push(...takeAll(part));
    });
    part.seal();
    out.push(...takeAll(part));
    expect(Buffer.concat(out).equals(Buffer.concat(chunks))).toBe(true);
  });

  it('hands out what several blocks hold as one piece of up to 256 KiB, so the PUT writes few large pieces', () => {
    const part = new PartBytes(new BlockPool());
    const chunks = Array.from({ length: 40 }, (_, i) => bytesOf(16 * 1024, i));
    for (const chunk of chunks) part.push(chunk, false);
    const pieces = takeAll(part);
    expect(pieces.map((p) => p.length)).toEqual([256 * 1024, 256 * 1024, 128 * 1024]);
    expect(Buffer.concat(pieces).equals(Buffer.concat(chunks))).toBe(true);
  });

  it('passes a chunk the head waits for through as it came, and copies one that has to wait', () => {
    const part = new PartBytes(new BlockPool());
    const first = bytesOf(1000, 5);
    const second = bytesOf(1000, 6);
    part.push(first, true);
    part.push(second, true);
    const [a, b] = takeAll(part);
    expect(a).toBe(first);
    expect(b).not.toBe(second);
    expect(b!.equals(second)).toBe(true);
  });

  it('hands the PUT its own Buffers: reusing a block later does not change bytes already taken', () => {
    const pool = new CountingPool();
    const part = new PartBytes(pool);
    part.push(bytesOf(64 * 1024, 7), false);
    part.seal();
    const taken = takeAll(part);
    const before = Buffer.concat(taken);
    // The block is back in the pool; a second part writes other bytes into it.
    expect(pool.returned).toHaveLength(1);
    const next = new PartBytes(pool);
    next.push(bytesOf(64 * 1024, 99), false);
    expect(Buffer.concat(taken).equals(before)).toBe(true);
    expect(pool.handedOut).toBe(2);
  });

  it('gives a block back only when it is full or its part is done, and every piece of it was taken', () => {
    const pool = new CountingPool();
    const part = new PartBytes(pool);
    part.push(bytesOf(10_000, 8), false);
    takeAll(part);
    // Taken, but the block still takes the part's next bytes.
    expect(pool.returned).toHaveLength(0);
    part.push(bytesOf(60_000, 9), false);
    // The block filled up (64 KiB) and the rest went to a second one; the first still has pieces to take.
    expect(pool.returned).toHaveLength(0);
    part.shift();
    part.shift();
    expect(pool.returned).toHaveLength(1);
    takeAll(part);
    part.seal();
    expect(pool.returned).toHaveLength(2);
  });
});
