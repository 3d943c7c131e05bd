/**
 * How a call reaches the Company Data Service: undici with keep-alive, the
 * bearer token, the call's time limits, and every failure turned into one of
 * the typed errors of errors.ts (responses.ts says which); a caller's abort
 * surfaces as the abort itself. No retries here (Temporal retries
 * activities) but one: a 401 to a token that has since been replaced.
 * Nothing the transport throws or reports carries the token or a header:
 * undici errors are never attached as `cause`, only their code and a message
 * checked for the token.
 */
import type { Readable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import { SERVICE_ENDPOINTS, type ServiceEndpoint } from '../../workflows/contracts/endpoints.js';
import { fencedBody } from '../job-record/fenced-body.js';
import type { CurrentToken, TokenSource } from './bearer-token.js';
import { parseRedactedErrorBody } from './error-body.js';
import { ServiceError, type ServiceErrorDetails, Timeout, Unauthorized } from './errors.js';
import type { Shape } from './response-shapes.js';
import { parseRetryAfter, parseSuccess, statusError, transportError } from './responses.js';
import type { ResponseEvent } from './types.js';
import type { UploadBody } from './upload-body.js';

interface TransportOptions {
  baseUrl: string;
  tokens: TokenSource;
  /** Whole-request limit of every call but the upload. */
  requestTimeoutMs: number;
  /** How long the service may take to answer once the last byte of an upload is sent. */
  uploadResponseTimeoutMs: number;
  /** Default: a keep-alive Agent with a bounded number of connections per origin. */
  dispatcher?: Dispatcher;
  onResponse?: (e: ResponseEvent) => void;
}

/** One call, as an endpoint method describes it; its method comes from the endpoint table. */
interface ServiceRequest<T> {
  endpoint: ServiceEndpoint;
  /** The endpoint's path with its parameters filled in (endpointPath). */
  path: string;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  /** Absent: any 2xx with any body is success. */
  shape?: Shape<T>;
  signal?: AbortSignal;
  /**
   * The fence of a `json` body: its last byte waits until this answers true
   * (false ends the request short of its length, so it cannot commit). Asked
   * once per send: the resend after a 401 asks again.
   */
  fence?: () => Promise<boolean>;
}

interface Dispatch<T> extends ServiceRequest<T> {
  upload?: UploadBody;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /** Starts the call's own timeout; `expire(why)` aborts it as a Timeout. Returns the disarm. */
  arm(expire: (why: string) => void): () => void;
}

const MAX_CONNECTIONS = 16;

/** Own abort reason, so a timeout is told apart from the caller's abort. */
const TIMED_OUT = Symbol('timed out');

export class Transport {
  readonly #origin: string;
  readonly #prefix: string;
  readonly #tokens: TokenSource;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #requestTimeoutMs: number;
  readonly #uploadResponseTimeoutMs: number;
  readonly #onResponse?: (e: ResponseEvent) => void;
  #lastAnswerMs: number | undefined;

  constructor(options: TransportOptions) {
    const url = new URL(options.baseUrl);
    this.#origin = url.origin;
    this.#prefix = url.pathname.replace(/\/+$/, '');
    this.#tokens = options.tokens;
    this.#requestTimeoutMs = options.requestTimeoutMs;
    this.#uploadResponseTimeoutMs = options.uploadResponseTimeoutMs;
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#dispatcher =
      options.dispatcher ?? new Agent({ connections: MAX_CONNECTIONS, keepAliveTimeout: 10_000, pipelining: 1 });
    this.#onResponse = options.onResponse;
  }

  /** How long the service took to answer the last call that was not an upload (request to headers). */
  get lastAnswerMs(): number | undefined {
    return this.#lastAnswerMs;
  }

  /** A call bounded as a whole by requestTimeoutMs. */
  short<T>(r: ServiceRequest<T>): Promise<T> {
    const ms = this.#requestTimeoutMs;
    return this.call({
      ...r,
      headersTimeoutMs: ms,
      bodyTimeoutMs: ms,
      arm: (expire) => {
        const timer = setTimeout(() => expire(`no complete answer within ${ms} ms`), ms);
        return () => clearTimeout(timer);
      },
    });
  }

  /**
   * A call that streams `body`. Its only time limits are idle ones: the
   * body's own while sending, uploadResponseTimeoutMs after the last byte.
   */
  upload<T>(r: ServiceRequest<T>, body: UploadBody): Promise<T> {
    return this.call({
      ...r,
      upload: body,
      headersTimeoutMs: this.#uploadResponseTimeoutMs,
      bodyTimeoutMs: body.idleMs,
      arm: (expire) => body.arm(expire),
    }).finally(() => body.end());
  }

  /** Closes the connections this transport opened; a dispatcher passed in stays its owner's. */
  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }

  /**
   * A 401 to a token that has since been replaced (a rotated file, a fresh
   * exchange) is sent again once with the new token, which the spec allows
   * (it is a changed request). An upload is not: its body is spent, so its
   * Unauthorized says `tokenRotated` and the activity's retry sends it again.
   * One budget reservation covers both sends: a 401 is assumed not to count
   * against a daily limit (the service cannot tell whose call it was).
   */
  private async call<T>(r: Dispatch<T>): Promise<T> {
    try {
      return await this.attempt(r);
    } catch (e) {
      if (!(e instanceof Unauthorized && e.tokenRotated) || r.upload) throw e;
      return this.attempt(r);
    }
  }

  private async attempt<T>(r: Dispatch<T>): Promise<T> {
    r.signal?.throwIfAborted();
    const started = performance.now();
    const { token, version } = await this.token();
    const { method } = SERVICE_ENDPOINTS[r.endpoint];
    const details: ServiceErrorDetails = { endpoint: r.endpoint, method, path: r.path };
    const abort = new AbortController();
    let timedOut: string | undefined;
    const onCallerAbort = () => abort.abort(r.signal?.reason);
    r.signal?.addEventListener('abort', onCallerAbort, { once: true });
    const disarm = r.arm((why) => {
      timedOut ??= why;
      abort.abort(TIMED_OUT);
    });
    let status: number | undefined;
    let outcome: unknown;
    try {
      const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
      let body: string | Readable | undefined;
      if (r.json !== undefined) {
        headers['content-type'] = 'application/json';
        body = r.fence ? fencedJson(r.json, r.fence, headers) : JSON.stringify(r.json);
      } else if (r.upload) {
        headers['content-type'] = 'application/octet-stream';
        headers['content-length'] = String(r.upload.contentLength);
        // undici streams any async iterable (its docs say so; its type declarations lag behind).
        body = r.upload.chunks as unknown as Readable;
      }
      const sentAt = performance.now();
      const res = await this.#dispatcher.request({
        origin: this.#origin,
        path: this.#prefix + r.path + queryString(r.query),
        method,
        headers,
        body,
        signal: abort.signal,
        headersTimeout: r.headersTimeoutMs,
        bodyTimeout: r.bodyTimeoutMs,
      });
      r.upload?.answered();
      status = res.statusCode;
      if (!r.upload) this.#lastAnswerMs = performance.now() - sentAt;
      const refused = status < 200 || status > 299;
      const text = refused ? await refusalText(res.body) : await res.body.text();
      if (refused) {
        const facts = parseRedactedErrorBody(text, String(res.headers['content-type'] ?? ''), [token]);
        const retryAfterMs = parseRetryAfter(res.headers['retry-after'], Date.now());
        const tokenRotated = status === 401 && (await this.replacedSince(version));
        throw statusError(status, { ...details, retryAfterMs }, facts, tokenRotated);
      }
      return r.shape ? parseSuccess(r.shape, text, { ...details, status }, token) : (undefined as T);
    } catch (e) {
      outcome = this.failure(e, r, { ...details, status }, timedOut, token);
      throw outcome;
    } finally {
      disarm();
      r.signal?.removeEventListener('abort', onCallerAbort);
      this.report(r, method, status, started, outcome);
    }
  }

  /** The token to send with; a call that cannot get one never leaves, and its failure says so. */
  private async token(): Promise<CurrentToken> {
    try {
      return await this.#tokens.current();
    } catch (e) {
      throw e instanceof ServiceError ? e.beforeSending() : e;
    }
  }

  /** After a 401: whether the token changed since `sentVersion`, which makes a retry a different request. */
  private async replacedSince(sentVersion: number): Promise<boolean> {
    await this.#tokens.rejected?.(sentVersion).catch(() => undefined);
    const now = await this.#tokens.current().catch(() => undefined);
    return now !== undefined && now.version !== sentVersion;
  }

  /** What a failed call throws: the service's error, the caller's abort, the source's error, or a transport error. */
  private failure(
    e: unknown,
    r: Dispatch<unknown>,
    details: ServiceErrorDetails,
    timedOut: string | undefined,
    token: string,
  ): unknown {
    if (e instanceof ServiceError) return e;
    if (r.signal?.aborted) return r.signal.reason;
    const fromSource = r.upload?.sourceError;
    if (fromSource !== undefined) return fromSource;
    if (timedOut) return new Timeout({ ...details, serviceMessage: timedOut });
    return transportError(e, details, token);
  }

  private report(
    r: Dispatch<unknown>,
    method: string,
    status: number | undefined,
    started: number,
    outcome: unknown,
  ): void {
    if (!this.#onResponse) return;
    const errorType =
      outcome === undefined
        ? undefined
        : outcome instanceof ServiceError
          ? outcome.type
          : outcome instanceof Error
            ? outcome.name
            : 'Aborted';
    try {
      this.#onResponse({ endpoint: r.endpoint, method, status, durationMs: performance.now() - started, errorType });
    } catch {
      // A failing metrics hook must not turn a finished call into a failed one.
    }
  }
}

/**
 * An error answer's body, or '' when the connection broke before all of it
 * came (a service that answers mid-upload may reset the connection right
 * after): the status arrived, and it is the answer; its details are lost.
 */
async function refusalText(body: { text(): Promise<string> }): Promise<string> {
  try {
    return await body.text();
  } catch {
    return '';
  }
}

/** A JSON body whose last byte waits for `fence` (see fenced-body.ts); a fresh one for every send. */
function fencedJson(json: unknown, fence: () => Promise<boolean>, headers: Record<string, string>): Readable {
  const bytes = Buffer.from(JSON.stringify(json));
  headers['content-length'] = String(bytes.byteLength);
  const body = fencedBody([bytes], { contentLength: bytes.byteLength, tailBytes: 1, release: fence });
  // undici streams any async iterable (its docs say so; its type declarations lag behind).
  return body as unknown as Readable;
}

function queryString(query: Record<string, string | number | undefined> | undefined): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}
