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

  /** Over the budget: a part must ask for room before it reads on. */
  get full(): boolean {
    return this.bytes > this.budget;
  }

  async room(mayReadAnyway: () => boolean, signal: AbortSignal): Promise<void> {
    while (this.bytes > this.budget && !mayReadAnyway() && !signal.aborted) {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }
}

const BLOCK_BYTES = 64 * 1024;

/**
 * The most bytes the PUT takes at once. Each piece costs the PUT a pass
 * through its layers and a TLS write: 16 KiB pieces (S3's TLS chunks) cost
 * about 0.8 CPU s/GiB more than 64 KiB ones over loopback TLS, and pieces
 * beyond that save little.
 */
const PIECE_BYTES = 256 * 1024;

/** A reused block: bytes [0, filled) written, [0, taken) already handed to the PUT. */
export interface Block {
  buffer: Buffer;
  filled: number;
  taken: number;
}

/** Blocks the parts copy held bytes into, given back once the PUT has taken a copy of all they hold. */
export class BlockPool {
  private readonly free: Block[] = [];

  take(): Block {
    return this.free.pop() ?? { buffer: Buffer.allocUnsafeSlow(BLOCK_BYTES), filled: 0, taken: 0 };
  }

  give(block: Block): void {
    block.filled = 0;
    block.taken = 0;
    this.free.push(block);
  }
}

/**
 * One part's held bytes, in order: a chunk the PUT takes at once passes as it
 * came; the rest is copied into blocks, and handed out as copies of all that
 * a block holds (so a piece is one Buffer per 64 KiB at most, and nothing of
 * it stays behind for long).
 */
export class PartBytes {
  /** Chunks passing through, and blocks; the block being written is always last. */
  private readonly queue: (Buffer | Block)[] = [];
  private writing: Block | undefined;

  constructor(private readonly pool: BlockPool) {}

  /** Nothing to take now. */
  get empty(): boolean {
    this.dropTaken();
    const head = this.queue[0];
    return head === undefined || (head === this.writing && head.taken === head.filled);
  }

  /** `passThrough`: the PUT waits for this very chunk (the head, holding nothing), so it is not copied. */
  push(chunk: Buffer, passThrough: boolean): void {
    if (passThrough && this.empty) {
      this.stopWriting();
      this.queue.push(chunk);
      return;
    }
    for (let offset = 0; offset < chunk.length; ) {
      let block = this.writing;
      if (block === undefined || block.filled === block.buffer.length) {
        block = this.pool.take();
        this.writing = block;
        this.queue.push(block);
      }
      const copied = chunk.copy(block.buffer, block.filled, offset);
      block.filled += copied;
      offset += copied;
    }
  }

  /**
   * The next bytes for the PUT, in a Buffer of their own (never a view of a
   * block that will be reused): a chunk that passes through as it came, or
   * all that the blocks at the front hold, up to PIECE_BYTES, in one copy.
   */
  shift(): Buffer | undefined {
    this.dropTaken();
    const head = this.queue[0];
    if (head === undefined) return undefined;
    if (Buffer.isBuffer(head)) {
      this.queue.shift();
      return head;
    }
    let size = 0;
    for (const item of this.queue) {
      if (Buffer.isBuffer(item) || size >= PIECE_BYTES) break;
      size += item.filled - item.taken;
    }
    if (size === 0) return undefined;
    const piece = Buffer.allocUnsafe(Math.min(size, PIECE_BYTES));
    let at = 0;
    for (const item of this.queue) {
      if (Buffer.isBuffer(item) || at === piece.length) break;
      const n = Math.min(item.filled - item.taken, piece.length - at);
      item.buffer.copy(piece, at, item.taken, item.taken + n);
      item.taken += n;
      at += n;
    }
    const writing = this.writing;
    if (writing && writing.filled === writing.buffer.length && writing.taken === writing.filled)
      this.writing = undefined;
    this.dropTaken();
    return piece;
  }

  /** The part is done (or failed): its last block takes no more bytes. */
  seal(): void {
    this.stopWriting();
  }

  private stopWriting(): void {
    this.writing = undefined;
    this.dropTaken();
  }

  /** Gives back the blocks at the front that the PUT has taken all of and that take no more bytes. */
  private dropTaken(): void {
    for (;;) {
      const head = this.queue[0];
      if (head === undefined || Buffer.isBuffer(head) || head === this.writing || head.taken < head.filled) return;
      this.queue.shift();
      this.pool.give(head);
    }
  }
}
