/**
 * The Company Data Service client: one typed method per endpoint the worker
 * calls, on undici with keep-alive. Every failure becomes one of the typed
 * errors of errors.ts; a caller's abort surfaces as the abort itself. No
 * retries here (Temporal retries activities), and nothing the client throws
 * or reports carries the token or a header: undici errors are never attached
 * as `cause`, only their code and a message checked for the token.
 */
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, type Dispatcher } from 'undici';
import { declaredDefault } from '../../temporal.config.js';
import type { ServiceEndpoint } from '../../workflows/policy/endpoints.js';
import type { EntityType, FieldMapping, MappingObjectType } from '../../workflows/policy/import-input.js';
import { excerpt, parseRedactedErrorBody } from './error-body.js';
import {
  BadRequest,
  Forbidden,
  Network,
  NotFound,
  RateLimited,
  ServerError,
  ServiceError,
  type ServiceErrorDetails,
  Timeout,
  Unauthorized,
  UnusableResponse,
} from './errors.js';
import { parseJsonExact } from './exact-json.js';
import { redact } from './redaction.js';
import { checkShape, type Shape, shapes } from './response-shapes.js';
import type { TokenSource } from './token-source.js';
import type {
  ActivityFields,
  ActivityType,
  CallOptions,
  CreateImportJobBody,
  ImportJob,
  ImportJobList,
  ListJobsQuery,
  ResponseEvent,
  SubmitDataOptions,
} from './types.js';

export interface ServiceClientOptions {
  baseUrl: string;
  tokens: TokenSource;
  /** Whole-request limit of every call but the upload. */
  requestTimeoutMs?: number;
  /** An upload fails when no byte has moved for this long (not a limit on its total duration). */
  uploadIdleTimeoutMs?: number;
  /** How long the service may take to answer once the last byte of an upload is sent. */
  uploadResponseTimeoutMs?: number;
  /**
   * The longest an upload's body waits, after its first byte, for a refusal
   * on its headers (default 1 s). The wait is shorter once the service has
   * answered a call: a few times that answer's time (answerGraceMs).
   */
  uploadAnswerGraceMs?: number;
  /** Default: a keep-alive Agent with a bounded number of connections per origin. */
  dispatcher?: Dispatcher;
  onResponse?: (e: ResponseEvent) => void;
}

const IMPORT_PERMISSION = 'Import Data';
const MAPPING_PERMISSION = 'custom-source field mappings (its name is unpublished)';
const MAX_CONNECTIONS = 16;

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

interface Request<T> {
  endpoint: ServiceEndpoint;
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  upload?: { body: AsyncIterable<Uint8Array>; contentLength: number };
  /** Absent: any 2xx with any body is success. */
  shape?: Shape<T>;
  signal?: AbortSignal;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /** Starts the call's own timeout; `expire(why)` aborts it as a Timeout. Returns the disarm. */
  arm(expire: (why: string) => void): () => void;
  /** An error the upload's source stream threw: reported as itself, not as a network failure. */
  sourceError?: () => unknown;
  /** Called when the answer's status line and headers arrived. */
  onHeaders?: () => void;
}

/** Own abort reason, so a timeout is told apart from the caller's abort. */
const TIMED_OUT = Symbol('timed out');

/** Job ids travel as decimal strings: int64 ids above 2^53 do not survive a JS number. */
function int64Id(name: string, v: unknown): string {
  if (typeof v !== 'string' || !/^[0-9]{1,19}$/.test(v) || BigInt(v) > 2n ** 63n - 1n) {
    throw new RangeError(`${name} must be an int64 id as a decimal string, got ${JSON.stringify(v)}`);
  }
  return v;
}

function positiveInt(name: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) {
    throw new RangeError(`${name} must be a positive integer, got ${JSON.stringify(v)}`);
  }
  return v;
}

export class ServiceClient {
  readonly #origin: string;
  readonly #prefix: string;
  readonly #tokens: TokenSource;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #requestTimeoutMs: number;
  readonly #uploadIdleTimeoutMs: number;
  readonly #uploadResponseTimeoutMs: number;
  readonly #uploadAnswerGraceMs: number;
  readonly #onResponse?: (e: ResponseEvent) => void;
  /** How long the service took to answer the last call that was not an upload (request to headers). */
  #lastAnswerMs: number | undefined;

  constructor(options: ServiceClientOptions) {
    const url = new URL(options.baseUrl);
    this.#origin = url.origin;
    this.#prefix = url.pathname.replace(/\/+$/, '');
    this.#tokens = options.tokens;
    this.#requestTimeoutMs = options.requestTimeoutMs ?? declaredDefault('COMPANY_DATA_REQUEST_TIMEOUT');
    this.#uploadIdleTimeoutMs = options.uploadIdleTimeoutMs ?? declaredDefault('UPLOAD_IDLE_TIMEOUT');
    this.#uploadResponseTimeoutMs = options.uploadResponseTimeoutMs ?? 300_000;
    this.#uploadAnswerGraceMs = options.uploadAnswerGraceMs ?? 1_000;
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#dispatcher =
      options.dispatcher ?? new Agent({ connections: MAX_CONNECTIONS, keepAliveTimeout: 10_000, pipelining: 1 });
    this.#onResponse = options.onResponse;
  }

  createJob(body: CreateImportJobBody, opts: CallOptions = {}): Promise<ImportJob> {
    return this.short({
      endpoint: 'createJob',
      method: 'POST',
      path: '/import/v1/job',
      json: body,
      shape: shapes.createdJob,
      signal: opts.signal,
    });
  }

  /**
   * Streams `body` as the job's data file, with backpressure. The only time
   * limits are idle ones: no byte moved for uploadIdleTimeoutMs while sending,
   * no answer for uploadResponseTimeoutMs after the last byte. The caller owns
   * `body`: on failure it is no longer read, and the caller destroys it.
   *
   * A service may refuse an upload on its headers (401, 403, 404, 413, 429)
   * and close the connection: a body byte written after that meets a closed
   * socket, and the socket error would hide the answer. undici does not
   * support `Expect: 100-continue` on HTTP/1.1, so the body sends one byte
   * (undici writes the request head with it), then waits answerGraceMs, or
   * until an answer arrives, before the rest.
   */
  submitData(
    jobId: string,
    body: Readable | AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    opts: SubmitDataOptions,
  ): Promise<ImportJob> {
    int64Id('jobId', jobId);
    const contentLength = opts.contentLength;
    if (!Number.isSafeInteger(contentLength) || contentLength < 0) {
      throw new RangeError(`contentLength must be a whole number of bytes, got ${JSON.stringify(contentLength)}`);
    }
    const idleMs = this.#uploadIdleTimeoutMs;
    // Well inside the idle limit, which counts the grace as a time no byte moved.
    const graceMs = answerGraceMs(Math.min(this.#uploadAnswerGraceMs, Math.floor(idleMs / 2)), this.#lastAnswerMs);
    let idleTimer: NodeJS.Timeout | undefined;
    let bytesSent = 0;
    let sourceError: unknown;
    const { onProgress, onBodySent } = opts;
    // Aborted once the service answered: the body then sends nothing more.
    const answered = new AbortController();
    const ended = new AbortController();
    async function* metered(): AsyncGenerator<Uint8Array> {
      let first = true;
      try {
        for await (const chunk of body) {
          let rest = chunk;
          if (first && chunk.byteLength > 0) {
            first = false;
            // undici writes the request head with the first body byte: send one, then give a refusal time to arrive.
            yield chunk.subarray(0, 1);
            await sleep(graceMs, undefined, { signal: answered.signal }).catch(() => undefined);
            if (answered.signal.aborted) {
              // The answer is what counts; end the body only once the call has read it.
              await sleep(2 ** 31 - 1, undefined, { signal: ended.signal }).catch(() => undefined);
              return;
            }
            // Counted only now, so that the grace is not taken for a stall by the caller's own watchdog.
            bytesSent += 1;
            rest = chunk.subarray(1);
          }
          // Pulled by undici only once the socket took the previous chunk: a stalled peer stalls this loop too.
          idleTimer?.refresh();
          bytesSent += rest.byteLength;
          onProgress?.(bytesSent);
          yield rest;
        }
      } catch (e) {
        sourceError = e;
        throw e;
      }
      // Every byte is with the socket: from here undici's headersTimeout bounds the wait for the answer.
      clearTimeout(idleTimer);
      onBodySent?.();
    }
    return this.call({
      endpoint: 'submitData',
      method: 'PUT',
      path: `/import/v1/job/${jobId}/data`,
      query: { listAction: opts.listAction },
      upload: { body: metered(), contentLength },
      shape: shapes.importJob,
      signal: opts.signal,
      headersTimeoutMs: this.#uploadResponseTimeoutMs,
      bodyTimeoutMs: idleMs,
      arm: (expire) => {
        idleTimer = setTimeout(
          () => expire(`no byte moved for ${idleMs} ms (${bytesSent} of ${contentLength} bytes sent)`),
          idleMs,
        );
        return () => clearTimeout(idleTimer);
      },
      onHeaders: () => answered.abort(),
      sourceError: () => sourceError,
    }).finally(() => ended.abort());
  }

  getJob(jobId: string, opts: CallOptions = {}): Promise<ImportJob> {
    int64Id('jobId', jobId);
    return this.short({
      endpoint: 'jobStatus',
      method: 'GET',
      path: `/import/v1/job/${jobId}`,
      shape: shapes.importJob,
      signal: opts.signal,
    });
  }

  listJobs(query: ListJobsQuery = {}, opts: CallOptions = {}): Promise<ImportJobList> {
    return this.short({
      endpoint: 'listJobs',
      method: 'GET',
      path: '/import/v1/jobs',
      query: { ...query },
      shape: shapes.importJobList,
      signal: opts.signal,
    });
  }

  listSources(entityType: EntityType, opts: CallOptions = {}): Promise<string[]> {
    return this.short({
      endpoint: 'listSources',
      method: 'GET',
      path: `/import/v1/${encodeURIComponent(entityType)}/sources`,
      shape: shapes.sources,
      signal: opts.signal,
    });
  }

  listActivityTypes(opts: CallOptions = {}): Promise<ActivityType[]> {
    return this.short({
      endpoint: 'activityTypes',
      method: 'GET',
      path: '/import/v1/supported_activity_types',
      shape: shapes.activityTypes,
      signal: opts.signal,
    });
  }

  getActivityFields(activityTypeId: number, opts: CallOptions = {}): Promise<ActivityFields> {
    positiveInt('activityTypeId', activityTypeId);
    return this.short({
      endpoint: 'activityFields',
      method: 'GET',
      path: `/import/v1/activity_fields/${activityTypeId}`,
      shape: shapes.activityFields,
      signal: opts.signal,
    });
  }

  getFieldMappings(sourceId: string, objectType: MappingObjectType, opts: CallOptions = {}): Promise<FieldMapping[]> {
    return this.short({
      endpoint: 'getFieldMappings',
      method: 'GET',
      path: mappingPath(sourceId, objectType),
      shape: shapes.fieldMappings,
      signal: opts.signal,
    });
  }

  /** Replaces the whole set for the source and object type (the service answers 201, no body). */
  async putFieldMappings(
    sourceId: string,
    objectType: MappingObjectType,
    mappings: FieldMapping[],
    opts: CallOptions = {},
  ): Promise<void> {
    await this.short({
      endpoint: 'putFieldMappings',
      method: 'PUT',
      path: mappingPath(sourceId, objectType),
      json: { fieldMappings: mappings },
      signal: opts.signal,
    });
  }

  /** Closes the connections this client opened; a dispatcher passed in stays its owner's. */
  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }

  /** A call bounded as a whole by requestTimeoutMs. */
  private short<T>(r: Omit<Request<T>, 'headersTimeoutMs' | 'bodyTimeoutMs' | 'arm'>): Promise<T> {
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
   * A 401 to a token that has since been replaced (a rotated file, a fresh
   * exchange) is sent again once with the new token, which the spec allows
   * (it is a changed request). An upload is not: its body is spent, so its
   * Unauthorized says `tokenRotated` and the activity's retry sends it again.
   * One budget reservation covers both sends: a 401 is assumed not to count
   * against a daily limit (the service cannot tell whose call it was).
   */
  private async call<T>(r: Request<T>): Promise<T> {
    try {
      return await this.attempt(r);
    } catch (e) {
      if (!(e instanceof Unauthorized && e.tokenRotated) || r.upload) throw e;
      return this.attempt(r);
    }
  }

  private async attempt<T>(r: Request<T>): Promise<T> {
    r.signal?.throwIfAborted();
    const started = performance.now();
    const { token, version } = await this.#tokens.current();
    const details: ServiceErrorDetails = { endpoint: r.endpoint, method: r.method, path: r.path };
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
        body = JSON.stringify(r.json);
      } else if (r.upload) {
        headers['content-type'] = 'application/octet-stream';
        headers['content-length'] = String(r.upload.contentLength);
        // undici streams any async iterable (its docs say so; its type declarations lag behind).
        body = r.upload.body as unknown as Readable;
      }
      const sentAt = performance.now();
      const res = await this.#dispatcher.request({
        origin: this.#origin,
        path: this.#prefix + r.path + queryString(r.query),
        method: r.method,
        headers,
        body,
        signal: abort.signal,
        headersTimeout: r.headersTimeoutMs,
        bodyTimeout: r.bodyTimeoutMs,
      });
      r.onHeaders?.();
      status = res.statusCode;
      if (!r.upload) this.#lastAnswerMs = performance.now() - sentAt;
      const text = await res.body.text();
      if (status < 200 || status > 299) {
        const contentType = String(res.headers['content-type'] ?? '');
        const retryAfterMs = parseRetryAfter(res.headers['retry-after'], Date.now());
        throw await this.statusError(status, text, contentType, { ...details, retryAfterMs }, token, version);
      }
      return r.shape ? parseSuccess(r.shape, text, { ...details, status }, token) : (undefined as T);
    } catch (e) {
      outcome = this.failure(e, r, { ...details, status }, timedOut, token);
      throw outcome;
    } finally {
      disarm();
      r.signal?.removeEventListener('abort', onCallerAbort);
      this.report(r, status, started, outcome);
    }
  }

  /** What a failed call throws: the service's error, the caller's abort, the source's error, or a transport error. */
  private failure(
    e: unknown,
    r: Request<unknown>,
    details: ServiceErrorDetails,
    timedOut: string | undefined,
    token: string,
  ): unknown {
    if (e instanceof ServiceError) return e;
    if (r.signal?.aborted) return r.signal.reason;
    const fromSource = r.sourceError?.();
    if (fromSource !== undefined) return fromSource;
    if (timedOut) return new Timeout({ ...details, serviceMessage: timedOut });
    return transportError(e, details, token);
  }

  private async statusError(
    status: number,
    text: string,
    contentType: string,
    details: ServiceErrorDetails,
    token: string,
    sentVersion: number,
  ): Promise<ServiceError> {
    const facts = parseRedactedErrorBody(text, contentType, [token]);
    const d: ServiceErrorDetails = { ...details, status, ...facts };
    if (status === 400 || status === 413 || status === 422) return new BadRequest(d);
    if (status === 401) {
      // A rotation between sending and now makes a retry a different request, which the spec allows.
      await this.#tokens.rejected?.(sentVersion).catch(() => undefined);
      const now = await this.#tokens.current().catch(() => undefined);
      return new Unauthorized({ ...d, tokenRotated: now !== undefined && now.version !== sentVersion });
    }
    if (status === 403) {
      const permission = details.endpoint.endsWith('FieldMappings') ? MAPPING_PERMISSION : IMPORT_PERMISSION;
      return new Forbidden({ ...d, permission });
    }
    if (status === 404) return new NotFound(d);
    if (status === 429) return new RateLimited(d);
    if (status >= 500) return new ServerError(d);
    return new ServerError({
      ...d,
      serviceMessage: `unexpected status ${status}${facts.serviceMessage ? `: ${facts.serviceMessage}` : ''}`,
    });
  }

  private report(r: Request<unknown>, status: number | undefined, started: number, outcome: unknown): void {
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
      this.#onResponse({
        endpoint: r.endpoint,
        method: r.method,
        status,
        durationMs: performance.now() - started,
        errorType,
      });
    } catch {
      // A failing metrics hook must not turn a finished call into a failed one.
    }
  }
}

function mappingPath(sourceId: string, objectType: MappingObjectType): string {
  if (!/^[0-9]{1,19}$/.test(sourceId)) {
    throw new RangeError(`sourceId must be an int64 as a decimal string, got ${JSON.stringify(sourceId)}`);
  }
  return `/integration/v1/custom-sources/${sourceId}/field-mappings/${encodeURIComponent(objectType)}`;
}

function queryString(query: Record<string, string | number | undefined> | undefined): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}

function parseSuccess<T>(shape: Shape<T>, text: string, details: ServiceErrorDetails, token: string): T {
  let body: unknown;
  try {
    body = parseJsonExact(text);
  } catch {
    throw new UnusableResponse({
      ...details,
      serviceMessage: `expected ${shape.describes} as JSON, got ${excerpt(redact(text, [token])) ?? 'an empty body'}`,
    });
  }
  const checked = checkShape(shape, body);
  if ('problem' in checked)
    throw new UnusableResponse({ ...details, serviceMessage: redact(checked.problem, [token]) });
  return checked.value;
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);
/** Failures to open a connection: the request never reached the service. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Retry-After as delay-seconds or an HTTP date (RFC 9110 10.2.3), in ms from `nowMs`; undefined when unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** A Timeout or Network error from what undici or the socket threw: its code and a token-free message only. */
function transportError(e: unknown, details: ServiceErrorDetails, token: string): ServiceError {
  const err = e as { code?: unknown; message?: unknown; errors?: unknown };
  const code = typeof err?.code === 'string' ? err.code : undefined;
  let message = typeof err?.message === 'string' ? err.message : '';
  // A connect to a name with several addresses fails as an AggregateError with an empty message.
  if (!message && Array.isArray(err?.errors)) {
    message = err.errors.map((x: { message?: unknown }) => String(x?.message ?? '')).join('; ');
  }
  const said = excerpt(redact([code, message].filter(Boolean).join(': '), [token]));
  // Of an AggregateError, every address must have failed to connect.
  const codes = Array.isArray(err?.errors) ? err.errors.map((x: { code?: unknown }) => x?.code) : [code];
  const notSent = codes.length > 0 && codes.every((c) => typeof c === 'string' && NOT_SENT_CODES.has(c));
  const d = { ...details, serviceMessage: said ?? 'the connection failed without a reason', notSent };
  return code && TIMEOUT_CODES.has(code) ? new Timeout(d) : new Network(d);
}
