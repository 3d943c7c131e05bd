/**
 * A pass-through stream that reports every chunk the upload hands on. Placed
 * between the S3 read and the PUT body, it sees bytes only as fast as the
 * PUT takes them (backpressure), so it measures bytes moved, not bytes read.
 */
import { Transform, type TransformCallback } from 'node:stream';

export class ProgressMeter extends Transform {
  constructor(private readonly onBytes: (n: number) => void) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.onBytes(chunk.length);
    callback(null, chunk);
  }
}
