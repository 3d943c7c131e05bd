/**
 * A CSV object of any size that exists on no disk: an S3-compatible GET
 * endpoint serving one generated key, so a file over the service's 5 GB can
 * be planned and uploaded on a machine without 5 GB to spare. Every row but
 * the last is ROW_BYTES long (the same text with its own row number), so any
 * byte range is computed, not stored; the last row is padded so that the
 * object is exactly `sizeBytes` long. UTF-8, comma, CRLF: the service's own
 * form, so its body is the object itself, and its size decides the split.
 *
 * It answers GET (whole, or one `Range: bytes=a-b`), honours `If-Match`, and
 * sends an ETag: what the row stage and the upload ask of S3. Nothing else.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const HEADER = 'Account Name,Account Domain,Country,Employees,Notes\r\n';
export const ROW_BYTES = 100;
const ROWS_PER_BLOCK = 655;
const NAME = 'Company ';
const DIGITS = 10;

/** Row `i` (0-based) without its padding: `Company <i>,company-<i>.example.com,DE,<i % 5000>,` then x's. */
function rowText(i: number, bytes: number): string {
  const n = String(i).padStart(DIGITS, '0');
  const start = `${NAME}${n},company-${n}.example.com,DE,${String(i % 5000).padStart(4, '0')},`;
  return `${start}${'x'.repeat(bytes - start.length - 2)}\r\n`;
}

/** Where a row's numbers sit in its bytes: the two row numbers, then the employee count. */
const NAME_DIGITS_AT = NAME.length;
const DOMAIN_DIGITS_AT = NAME.length + DIGITS + ',company-'.length;
const EMPLOYEES_AT = DOMAIN_DIGITS_AT + DIGITS + '.example.com,DE,'.length;

export class GeneratedCsv {
  readonly rows: number;
  readonly lastRowBytes: number;
  readonly etag: string;
  private readonly header = Buffer.from(HEADER);
  private readonly template = Buffer.from(rowText(0, ROW_BYTES).repeat(ROWS_PER_BLOCK));

  constructor(readonly sizeBytes: number) {
    const body = sizeBytes - this.header.length;
    if (body < 2 * ROW_BYTES)
      throw new RangeError(`a generated CSV holds at least ${this.header.length + 2 * ROW_BYTES} bytes`);
    // Whole rows, and the last one longer (up to twice as long) to end exactly at sizeBytes.
    this.rows = Math.floor(body / ROW_BYTES);
    this.lastRowBytes = body - (this.rows - 1) * ROW_BYTES;
    this.etag = `"generated-${sizeBytes}"`;
  }

  /** The bytes from `start` to `end` (inclusive), in blocks of whole rows (the first and last cut). */
  *range(start: number, end: number): Generator<Buffer> {
    let at = start;
    if (at < this.header.length) {
      const piece = this.header.subarray(at, Math.min(this.header.length, end + 1));
      yield piece;
      at += piece.length;
    }
    const lastRowStart = this.header.length + (this.rows - 1) * ROW_BYTES;
    while (at <= end && at < lastRowStart) {
      const first = Math.floor((at - this.header.length) / ROW_BYTES);
      const count = Math.min(ROWS_PER_BLOCK, this.rows - 1 - first);
      const block = this.block(first, count);
      const from = at - (this.header.length + first * ROW_BYTES);
      const piece = block.subarray(from, Math.min(block.length, from + end + 1 - at));
      yield piece;
      at += piece.length;
    }
    if (at <= end) {
      const last = Buffer.from(rowText(this.rows - 1, this.lastRowBytes));
      yield last.subarray(at - lastRowStart, end + 1 - lastRowStart);
    }
  }

  /** Rows `first` to `first + count - 1`: the template with their numbers written in. */
  private block(first: number, count: number): Buffer {
    const block = Buffer.allocUnsafe(count * ROW_BYTES);
    this.template.copy(block, 0, 0, block.length);
    for (let r = 0; r < count; r++) {
      const i = first + r;
      const at = r * ROW_BYTES;
      writeDigits(block, at + NAME_DIGITS_AT, i, DIGITS);
      writeDigits(block, at + DOMAIN_DIGITS_AT, i, DIGITS);
      writeDigits(block, at + EMPLOYEES_AT, i % 5000, 4);
    }
    return block;
  }
}

function writeDigits(target: Buffer, at: number, value: number, width: number): void {
  let v = value;
  for (let d = width - 1; d >= 0; d--) {
    target[at + d] = 0x30 + (v % 10);
    v = Math.floor(v / 10);
  }
}

/** `bytes=a-b`, `bytes=a-` or none; undefined range for a header it cannot serve. */
function askedRange(header: string | undefined, size: number): { start: number; end: number } | 'whole' | undefined {
  if (header === undefined) return 'whole';
  const m = /^bytes=(\d+)-(\d*)$/.exec(header);
  if (!m) return undefined;
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  return start <= end ? { start, end } : undefined;
}

/** The response took what it was given, or closed. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done);
      resolve();
    };
    res.on('drain', done).on('close', done);
  });
}

async function answer(csv: GeneratedCsv, path: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'GET' || new URL(req.url ?? '/', 'http://x').pathname !== path) {
    res.writeHead(404, { 'content-type': 'application/xml' }).end('<Error><Code>NoSuchKey</Code></Error>');
    return;
  }
  const ifMatch = req.headers['if-match'];
  if (ifMatch !== undefined && ifMatch !== csv.etag) {
    res.writeHead(412, { 'content-type': 'application/xml' }).end('<Error><Code>PreconditionFailed</Code></Error>');
    return;
  }
  const range = askedRange(req.headers.range, csv.sizeBytes);
  if (range === undefined) {
    res.writeHead(416, { 'content-type': 'application/xml' }).end('<Error><Code>InvalidRange</Code></Error>');
    return;
  }
  const { start, end } = range === 'whole' ? { start: 0, end: csv.sizeBytes - 1 } : range;
  res.writeHead(range === 'whole' ? 200 : 206, {
    'content-length': end - start + 1,
    etag: csv.etag,
    'last-modified': new Date(0).toUTCString(),
    'content-type': 'text/csv',
    ...(range === 'whole' ? {} : { 'content-range': `bytes ${start}-${end}/${csv.sizeBytes}` }),
  });
  for (const piece of csv.range(start, end)) {
    if (res.destroyed) return;
    if (!res.write(piece)) await drained(res);
  }
  res.end();
}

/** Serves `csv` at `/<bucket>/<key>` (path-style S3) on a free loopback port. */
export async function serveGenerated(
  csv: GeneratedCsv,
  bucket: string,
  key: string,
): Promise<{ url: string; server: Server }> {
  const path = `/${bucket}/${key}`;
  const server = createServer((req, res) => {
    answer(csv, path, req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}
