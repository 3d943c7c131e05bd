/**
 * Watches the bytes of a file whose dialect is already the service's, for
 * what the row plan must know before it may send the file as it is: its
 * size, its digest, and whether a CR stands alone somewhere (the header row
 * said LF or CRLF, but exports mix line ends, and a lone CR is the line end
 * the service may not split on: such a file is rewritten, to be safe).
 */
import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

const CR = 0x0d;
const LF = 0x0a;

export class OriginalTap {
  bytes = 0;
  loneCr = false;
  readonly hash = createHash('sha256');
  private endsInCr = false;

  stream(): Transform {
    return new Transform({
      transform: (chunk: Buffer, _enc, done: TransformCallback) => {
        this.bytes += chunk.length;
        this.hash.update(chunk);
        this.scan(chunk);
        done(null, chunk);
      },
      flush: (done: TransformCallback) => {
        if (this.endsInCr) this.loneCr = true;
        done();
      },
    });
  }

  private scan(chunk: Buffer): void {
    if (this.loneCr || chunk.length === 0) return;
    if (this.endsInCr && chunk[0] !== LF) this.loneCr = true;
    for (let at = chunk.indexOf(CR); at !== -1 && !this.loneCr; at = chunk.indexOf(CR, at + 1)) {
      if (at + 1 < chunk.length && chunk[at + 1] !== LF) this.loneCr = true;
    }
    this.endsInCr = chunk[chunk.length - 1] === CR;
  }
}
