/**
 * Where the ranged reader keeps the bytes that arrived from S3 before the PUT
 * takes them, and how many it may keep.
 *
 * Why blocks: a part behind the head holds its bytes for a while (a tenth of
 * a second or more at production rates), long enough for V8 to promote the
 * socket's Buffers to the old generation. Freed there, they wait for a full
 * GC, which V8 starts only after some 64 MB more of such memory, so the
 * process grew by that much on top of what it held. Copied into blocks that
 * are reused all along the upload, the socket's Buffers die young (a cheap
 * scavenge frees them), and the copies the PUT takes die young as well.
 */

/**
 * Bytes that arrived from S3 and wait for the PUT, across all parts. A part
 * stops reading while they exceed the budget (TCP then slows its S3
 * connection), unless it is the head with nothing left to emit, so memory
 * stays within the budget (and a chunk per part) however many parts are in
 * flight and however large they are.
 */
export class HeldBytes {
  private bytes = 0;
  private waiters: (() => void)[] = [];

  constructor(
    private readonly budget: number,
    private readonly onHeld?: (bytes: number) => void,
  ) {}

  add(n: number): void {
    this.bytes += n;
    this.onHeld?.(this.bytes);
  }

  /** `emptied`: the head has emitted all it held, and may read on whatever the others hold. */
  release(n: number, emptied: boolean): void {
    this.bytes -= n;
    if (this.bytes <= this.budget || emptied) this.changed();
  }

  /** Wakes every part waiting for room, to look again. */
  changed(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  async room(mayReadAnyway: () => boolean, signal: AbortSignal): Promise<void> {
    while (this.bytes > this.budget && !mayReadAnyway() && !signal.aborted) {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }
}

const BLOCK_BYTES = 64 * 1024;

/** Blocks the parts copy held bytes into, given back once the PUT has taken a copy of all they hold. */
export class BlockPool {
  private readonly free: Buffer[] = [];

  take(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafeSlow(BLOCK_BYTES);
  }

  give(block: Buffer): void {
    this.free.push(block);
  }
}

interface Block {
  buffer: Buffer;
  filled: number;
  /** Pieces of it not yet taken. */
  pieces: number;
  /** Full, or its part is done: nothing more is written to it. */
  sealed: boolean;
}

interface Piece {
  bytes: Buffer;
  block?: Block;
}

/** One part's held bytes, in order: a chunk the PUT takes at once as it came, the rest copied into blocks. */
export class PartBytes {
  private readonly pieces: Piece[] = [];
  private current: Block | undefined;

  constructor(private readonly pool: BlockPool) {}

  get empty(): boolean {
    return this.pieces.length === 0;
  }

  /** `passThrough`: the PUT waits for this very chunk (the head, holding nothing), so no copy is kept. */
  push(chunk: Buffer, passThrough: boolean): void {
    if (passThrough && this.pieces.length === 0) {
      this.pieces.push({ bytes: chunk });
      return;
    }
    for (let offset = 0; offset < chunk.length; ) {
      const block = this.writable();
      const n = Math.min(chunk.length - offset, block.buffer.length - block.filled);
      chunk.copy(block.buffer, block.filled, offset, offset + n);
      this.pieces.push({ bytes: block.buffer.subarray(block.filled, block.filled + n), block });
      block.filled += n;
      block.pieces++;
      offset += n;
    }
  }

  /** The next bytes for the PUT: its own Buffer, never a view of a block that will be reused. */
  shift(): Buffer | undefined {
    const piece = this.pieces.shift();
    if (!piece?.block) return piece?.bytes;
    const copy = Buffer.from(piece.bytes);
    piece.block.pieces--;
    this.giveBackIfDone(piece.block);
    return copy;
  }

  /** The part is done (or failed): its last block takes no more bytes. */
  seal(): void {
    if (!this.current) return;
    this.current.sealed = true;
    this.giveBackIfDone(this.current);
    this.current = undefined;
  }

  private writable(): Block {
    if (this.current && this.current.filled < this.current.buffer.length) return this.current;
    this.seal();
    this.current = { buffer: this.pool.take(), filled: 0, pieces: 0, sealed: false };
    return this.current;
  }

  private giveBackIfDone(block: Block): void {
    if (block.sealed && block.pieces === 0) this.pool.give(block.buffer);
  }
}
