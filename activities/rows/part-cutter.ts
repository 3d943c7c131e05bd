/**
 * Cuts the canonical body into parts at row boundaries: a part takes sent
 * rows while they fit in `maxPartBytes` with the header, so where it is cut
 * depends on the file and the settings alone. Each part's size and digest are
 * counted as the rows pass, for the plan.
 */
import { createHash } from 'node:crypto';
import { type CanonicalLine, LineBlocks } from './line-blocks.js';
import type { PartPlan } from './row-plan.js';

class OpenPart {
  bytes = 0;
  rowsSent = 0;
  private readonly hash = createHash('sha256');
  // Lines are hashed in blocks: hashing each short line alone costs more than reading it.
  private readonly blocks = new LineBlocks();

  constructor(
    readonly number: number,
    readonly firstRow: number,
    readonly startByte: number,
    headerLine: string,
  ) {
    this.append(headerLine, Buffer.byteLength(headerLine));
  }

  add(line: CanonicalLine, bytes: number): void {
    this.rowsSent++;
    this.append(line, bytes);
  }

  close(lastRow: number): PartPlan {
    this.hash.update(this.blocks.rest());
    const { number, firstRow, rowsSent, startByte, bytes } = this;
    return { number, firstRow, lastRow, rowsSent, startByte, bytes, sha256: this.hash.digest('hex') };
  }

  private append(line: CanonicalLine, bytes: number): void {
    this.bytes += bytes;
    const block = this.blocks.add(line, bytes);
    if (block) this.hash.update(block);
  }
}

export class PartCutter {
  private readonly parts: PartPlan[] = [];
  private open: OpenPart | undefined;

  constructor(
    private readonly headerLine: string,
    private readonly maxPartBytes: number,
  ) {}

  /** A data row was read, sent or not: the first one opens part 1, whose range starts there. */
  read(row: number, start: number): void {
    this.open ??= new OpenPart(1, row, start, this.headerLine);
  }

  /** A sent row's canonical line; a row that does not fit in the open part opens the next part. */
  send(row: number, start: number, line: CanonicalLine, bytes: number): void {
    let part = this.open!;
    if (part.rowsSent > 0 && part.bytes + bytes > this.maxPartBytes) {
      this.parts.push(part.close(row - 1));
      part = this.open = new OpenPart(part.number + 1, row, start, this.headerLine);
    }
    part.add(line, bytes);
  }

  /** The parts, the last one covering the rows up to `lastRow`; none when no row was sent. */
  finish(lastRow: number): PartPlan[] {
    if (this.open && this.open.rowsSent > 0) this.parts.push(this.open.close(lastRow));
    this.open = undefined;
    return this.parts;
  }
}
