/**
 * Watches the bytes of a file whose dialect is already the service's, for
 * what the row plan must know before it may send the file as it is: its
 * size, its digest, and whether its quoting and line ends are RFC 4180's.
 * The parser reads leniently what a strict reader may refuse: a quote inside
 * an unquoted field (`5" screen`), text after a closing quote, and a CR alone
 * as a line end (the header row said LF or CRLF, but exports mix them). A
 * file with any of these is rewritten, which quotes and ends lines properly.
 */
import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

const QUOTE = 0x22;
const COMMA = 0x2c;
const CR = 0x0d;
const LF = 0x0a;

/** Where the scanner stands: at a field's start, inside an unquoted or quoted field, or just past a quote in one. */
enum At {
  FieldStart,
  Unquoted,
  Quoted,
  QuoteInQuoted,
  CrOutsideQuotes,
}

export class OriginalTap {
  bytes = 0;
  /** The first reason the bytes are not strict RFC 4180, if any. */
  notStrict: string | undefined;
  readonly hash = createHash('sha256');
  private at = At.FieldStart;

  stream(): Transform {
    return new Transform({
      transform: (chunk: Buffer, _enc, done: TransformCallback) => {
        this.scan(chunk);
        this.bytes += chunk.length;
        this.hash.update(chunk);
        done(null, chunk);
      },
      flush: (done: TransformCallback) => {
        if (this.at === At.CrOutsideQuotes) this.notStrict ??= 'a line ends in CR alone';
        done();
      },
    });
  }

  private scan(chunk: Buffer): void {
    let at = this.at;
    for (let i = 0; i < chunk.length && this.notStrict === undefined; i++) {
      const byte = chunk[i];
      if (at === At.CrOutsideQuotes) {
        if (byte !== LF) this.notStrict = `a line ends in CR alone (byte ${this.bytes + i - 1})`;
        at = At.FieldStart;
        if (byte === LF) continue;
      }
      if (at === At.Quoted) {
        // Most bytes of a quoted field: jump to its next quote.
        const next = chunk.indexOf(QUOTE, i);
        if (next === -1) break;
        i = next;
        at = At.QuoteInQuoted;
      } else if (byte === COMMA || byte === LF) {
        at = At.FieldStart;
      } else if (byte === CR) {
        at = At.CrOutsideQuotes;
      } else if (byte === QUOTE) {
        if (at === At.FieldStart) at = At.Quoted;
        else if (at === At.QuoteInQuoted) at = At.Quoted;
        else this.notStrict = `a quote inside an unquoted field (byte ${this.bytes + i})`;
      } else if (at === At.QuoteInQuoted) {
        this.notStrict = `text after a closing quote (byte ${this.bytes + i})`;
      } else {
        at = At.Unquoted;
      }
    }
    this.at = at;
  }
}
