/**
 * Watches the bytes of a file whose dialect is already the service's, for
 * what the row plan must know before it may send the file as it is: its
 * size and its digest. Whether its quoting and line ends are RFC 4180's is
 * the strict reader's word: it hands the rest of a file to csv-parse at the
 * first row that is not (a quote inside an unquoted field, text after a
 * closing quote, a CR alone), and such a file is rewritten, which quotes and
 * ends lines properly.
 */
import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

export class OriginalTap {
  bytes = 0;
  /** The first reason the bytes are not strict RFC 4180, if any. */
  notStrict: string | undefined;
  readonly hash = createHash('sha256');

  stream(): Transform {
    return new Transform({
      transform: (chunk: Buffer, _enc, done: TransformCallback) => {
        this.bytes += chunk.length;
        this.hash.update(chunk);
        done(null, chunk);
      },
    });
  }
}
