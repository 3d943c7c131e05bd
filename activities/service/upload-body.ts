/**
 * The body of an upload (`submitData`): the caller's bytes, streamed with
 * backpressure, metered for progress and for the idle limit, and held back
 * after the first byte for a refusal on the request's headers.
 *
 * A service may refuse an upload on its headers (401, 403, 404, 413, 429)
 * and close the connection: a body byte written after that meets a closed
 * socket, and the socket error would hide the answer. undici does not
 * support `Expect: 100-continue` on HTTP/1.1, so the body sends one byte
 * (undici writes the request head with it), then waits answerGraceMs, or
 * until an answer arrives, before the rest.
 */
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

/** A refusal on an upload's headers is awaited this many times the service's last answer time... */
const ANSWER_GRACE_MULTIPLE = 4;
/** ...and never less than this. */
const MIN_ANSWER_GRACE_MS = 100;

/**
 * How long an upload's body waits after its first byte for a refusal on its
 * headers. A service refuses from the same checks (token, job, limits) that
 * answer any call, so a few times the last answer's time covers it; a fixed
 * second cost every upload a second (a seventh of a GiB's time at 150 MB/s). Before any
 * answer, and never beyond it, the configured ceiling.
 */
export function answerGraceMs(ceilingMs: number, lastAnswerMs: number | undefined): number {
  if (lastAnswerMs === undefined) return ceilingMs;
  return Math.min(ceilingMs, Math.max(MIN_ANSWER_GRACE_MS, Math.ceil(ANSWER_GRACE_MULTIPLE * lastAnswerMs)));
}

interface UploadBodyOptions {
  contentLength: number;
  /** The upload fails when no byte has moved for this long. */
  idleMs: number;
  /** The longest the body waits after its first byte for a refusal. */
  graceCeilingMs: number;
  /** How long the service took to answer its last call, if it answered one. */
  lastAnswerMs: number | undefined;
  onProgress?: (bytesSent: number) => void;
  onBodySent?: () => void;
}

export class UploadBody {
  /** What undici streams: pulled only once the socket took the previous chunk. */
  readonly chunks: AsyncIterable<Uint8Array>;
  readonly contentLength: number;
  readonly idleMs: number;
  readonly #graceMs: number;
  readonly #onProgress?: (bytesSent: number) => void;
  readonly #onBodySent?: () => void;
  #idleTimer: NodeJS.Timeout | undefined;
  #bytesSent = 0;
  #sourceError: unknown;
  /** Aborted once the service answered: the body then sends nothing more. */
  readonly #answered = new AbortController();
  readonly #ended = new AbortController();

  constructor(source: Readable | AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options: UploadBodyOptions) {
    this.contentLength = options.contentLength;
    this.idleMs = options.idleMs;
    // Well inside the idle limit, which counts the grace as a time no byte moved.
    this.#graceMs = answerGraceMs(
      Math.min(options.graceCeilingMs, Math.floor(options.idleMs / 2)),
      options.lastAnswerMs,
    );
    this.#onProgress = options.onProgress;
    this.#onBodySent = options.onBodySent;
    this.chunks = this.#metered(source);
  }

  /** Starts the idle limit; `expire(why)` fails the upload as a Timeout. Returns the disarm. */
  arm(expire: (why: string) => void): () => void {
    const { idleMs, contentLength } = this;
    this.#idleTimer = setTimeout(
      () => expire(`no byte moved for ${idleMs} ms (${this.#bytesSent} of ${contentLength} bytes sent)`),
      idleMs,
    );
    return () => clearTimeout(this.#idleTimer);
  }

  /** The answer's status line and headers arrived. */
  answered(): void {
    this.#answered.abort();
  }

  /** The call is over, its answer read: a body held back for the answer may end. */
  end(): void {
    this.#ended.abort();
  }

  /** What the caller's source threw, if it threw: reported as itself, not as a network failure. */
  get sourceError(): unknown {
    return this.#sourceError;
  }

  async *#metered(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): AsyncGenerator<Uint8Array> {
    let first = true;
    try {
      for await (const chunk of source) {
        let rest = chunk;
        if (first && chunk.byteLength > 0) {
          first = false;
          // undici writes the request head with the first body byte: send one, then give a refusal time to arrive.
          yield chunk.subarray(0, 1);
          await sleep(this.#graceMs, undefined, { signal: this.#answered.signal }).catch(() => undefined);
          if (this.#answered.signal.aborted) {
            // The answer is what counts; end the body only once the call has read it.
            await sleep(2 ** 31 - 1, undefined, { signal: this.#ended.signal }).catch(() => undefined);
            return;
          }
          // Counted only now, so that the grace is not taken for a stall by the caller's own watchdog.
          this.#bytesSent += 1;
          rest = chunk.subarray(1);
        }
        // Pulled by undici only once the socket took the previous chunk: a stalled peer stalls this loop too.
        this.#idleTimer?.refresh();
        this.#bytesSent += rest.byteLength;
        this.#onProgress?.(this.#bytesSent);
        yield rest;
      }
    } catch (e) {
      this.#sourceError = e;
      throw e;
    }
    // Every byte is with the socket: from here undici's headersTimeout bounds the wait for the answer.
    clearTimeout(this.#idleTimer);
    this.#onBodySent?.();
  }
}
