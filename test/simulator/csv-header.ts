/**
 * Captures a CSV file's header row from a body that streams past in chunks,
 * keeping only the bytes up to the end of the first record (a quoted label
 * may contain a newline) and at most `maxBytes` of them.
 */
import { parse } from 'csv-parse/sync';

const QUOTE = 0x22;
const NEWLINE = 0x0a;

export class HeaderCapture {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private inQuotes = false;
  private done = false;

  constructor(private readonly maxBytes = 64 * 1024) {}

  push(chunk: Buffer): void {
    if (this.done) return;
    let end = chunk.length;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (byte === QUOTE) this.inQuotes = !this.inQuotes;
      else if (byte === NEWLINE && !this.inQuotes) {
        end = i;
        this.done = true;
        break;
      }
    }
    const take = Math.min(end, this.maxBytes - this.size);
    this.chunks.push(chunk.subarray(0, take));
    this.size += take;
    if (this.size >= this.maxBytes) this.done = true;
  }

  /** The header labels, or undefined when the body had no parseable header row. */
  header(): string[] | undefined {
    return parseHeaderLine(Buffer.concat(this.chunks));
  }
}

/** Parses one CSV record (UTF-8, optional BOM, quotes) into its labels. */
function parseHeaderLine(bytes: Buffer): string[] | undefined {
  try {
    const records = parse(bytes, { bom: true, to: 1, relax_column_count: true, trim: true }) as string[][];
    const first = records[0];
    return first?.some((label) => label !== '') ? first : undefined;
  } catch {
    return undefined;
  }
}
