/**
 * One direction of an emulated network link: bytes read from `source` reach
 * `destination` no sooner than the link allows. Each chunk is serialised at
 * the link's rate (a per-connection bucket and a bucket shared by every
 * connection of the link), then travels for the one-way delay. The source is
 * read eagerly up to what the link can hold in flight, so the delay overlaps
 * the transfer as on a real wire, and paused beyond it, so TCP flow control
 * reaches the sender as it would behind a slow link.
 */
import type { Duplex } from 'node:stream';

/** Serialisation at a fixed rate: a virtual clock of when the wire is next free. */
export class RateBucket {
  private nextFreeAtMs = 0;
  constructor(private readonly bytesPerSecond: number) {}

  /** Reserves the wire for `bytes` and returns when their last byte has left. */
  reserve(bytes: number, nowMs: number): number {
    if (!Number.isFinite(this.bytesPerSecond)) return nowMs;
    const start = Math.max(nowMs, this.nextFreeAtMs);
    this.nextFreeAtMs = start + (bytes * 1000) / this.bytesPerSecond;
    return this.nextFreeAtMs;
  }
}

export interface PipeShape {
  oneWayDelayMs: number;
  buckets: RateBucket[];
  /** Bytes the link holds in flight before the source is paused. */
  inFlightLimitBytes: number;
}

interface Queued {
  chunk: Buffer;
  releaseAtMs: number;
}

export function shapedPipe(source: Duplex, destination: Duplex, shape: PipeShape): void {
  const queue: Queued[] = [];
  let queuedBytes = 0;
  let timer: NodeJS.Timeout | undefined;
  let waitingForDrain = false;
  let sourceEnded = false;

  const flush = () => {
    timer = undefined;
    if (waitingForDrain || destination.destroyed) return;
    const now = performance.now();
    while (queue.length > 0 && queue[0]!.releaseAtMs <= now) {
      const { chunk } = queue.shift()!;
      queuedBytes -= chunk.length;
      if (!destination.write(chunk)) {
        waitingForDrain = true;
        destination.once('drain', () => {
          waitingForDrain = false;
          flush();
        });
        break;
      }
    }
    if (source.isPaused() && queuedBytes <= shape.inFlightLimitBytes / 2) source.resume();
    if (queue.length === 0) {
      if (sourceEnded) destination.end();
      return;
    }
    if (!waitingForDrain) timer = setTimeout(flush, Math.max(0, queue[0]!.releaseAtMs - now));
  };

  source.on('data', (chunk: Buffer) => {
    const now = performance.now();
    const leftAt = Math.max(now, ...shape.buckets.map((b) => b.reserve(chunk.length, now)));
    queue.push({ chunk, releaseAtMs: leftAt + shape.oneWayDelayMs });
    queuedBytes += chunk.length;
    if (queuedBytes > shape.inFlightLimitBytes) source.pause();
    if (timer === undefined && !waitingForDrain) flush();
  });
  source.on('end', () => {
    sourceEnded = true;
    if (timer === undefined && !waitingForDrain) flush();
  });
}
