/**
 * A request body whose last bytes wait for the fence: everything but the
 * final `tailBytes` of `contentLength` streams as it comes; the tail goes out
 * only when `release()` says this attempt still owns its intent (a confirm
 * whose lease is still valid). Refused, the body throws instead, so the
 * request ends short of its Content-Length, and a body short of its length
 * never commits: a zombie attempt cannot complete a create or an upload.
 */

/** The fence refused the body's last bytes: the request must end short of its length. */
export class FenceRefused extends Error {
  constructor(reason: string) {
    super(`the last bytes were held back: ${reason}`);
    this.name = 'FenceRefused';
  }
}

export interface FencedBodyOptions {
  contentLength: number;
  /** How many final bytes wait for the fence (at least 1, at most the whole body). */
  tailBytes: number;
  /** True: send the tail now. False: refuse. Called once, when every other byte was taken. */
  release: () => Promise<boolean>;
  /** Called once the tail was handed on: a complete body may now reach the service. */
  onTailSent?: () => void;
}

export async function* fencedBody(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options: FencedBodyOptions,
): AsyncGenerator<Uint8Array> {
  const { contentLength } = options;
  const tailBytes = Math.min(Math.max(1, options.tailBytes), contentLength);
  const tailStart = contentLength - tailBytes;
  const tail = new Uint8Array(tailBytes);
  let seen = 0;
  for await (const chunk of source) {
    if (seen + chunk.byteLength > contentLength) throw new Error(`the source holds more than ${contentLength} bytes`);
    const free = Math.max(0, Math.min(chunk.byteLength, tailStart - seen));
    if (free > 0) yield chunk.subarray(0, free);
    if (free < chunk.byteLength) tail.set(chunk.subarray(free), seen + free - tailStart);
    seen += chunk.byteLength;
  }
  if (seen !== contentLength) throw new Error(`the source ended after ${seen} of ${contentLength} bytes`);
  if (!(await options.release())) throw new FenceRefused('another attempt owns this request now');
  yield tail;
  options.onTailSent?.();
}
