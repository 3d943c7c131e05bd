/**
 * The service client's error vocabulary: every non-2xx response, timeout and
 * network failure becomes one of these. They carry what the response said
 * (status, errorCode, message, diagnosticCode) and which call failed, and
 * nothing else: never a header, never the token. Each class has its own
 * `name` for logs (ServiceTimeoutError is an HTTP timeout, not a Temporal
 * one); `type` is the failure type workflows match on and histories keep.
 */
import type { ServiceEndpoint } from '../../workflows/contracts/endpoints.js';
import type { FailureType } from '../../workflows/contracts/failure-types.js';
import { TokenSourceError } from './bearer-token.js';

export interface ServiceErrorDetails {
  endpoint: ServiceEndpoint;
  method: string;
  /** The request path, e.g. /import/v1/job/42/data (no host, no query secrets). */
  path: string;
  status?: number;
  errorCode?: string;
  diagnosticCode?: string;
  /** What the service said, trimmed; or what went wrong on our side. */
  serviceMessage?: string;
  /** For Unauthorized: the token changed since this request was sent, so a retry is a changed request. */
  tokenRotated?: boolean;
  /** The service's Retry-After, in ms, when it sent a readable one. */
  retryAfterMs?: number;
  /** The request never reached the service (connection refused, name not resolved): nothing was spent. */
  notSent?: boolean;
}

export abstract class ServiceError extends Error {
  abstract override readonly name: string;
  abstract readonly type: FailureType;
  readonly endpoint: ServiceEndpoint;
  readonly method: string;
  readonly path: string;
  readonly status?: number;
  readonly errorCode?: string;
  readonly diagnosticCode?: string;
  readonly serviceMessage?: string;
  readonly retryAfterMs?: number;
  readonly notSent: boolean;

  constructor(summary: string, details: ServiceErrorDetails) {
    super(ServiceError.describe(summary, details));
    this.endpoint = details.endpoint;
    this.method = details.method;
    this.path = details.path;
    this.status = details.status;
    this.errorCode = details.errorCode;
    this.diagnosticCode = details.diagnosticCode;
    this.serviceMessage = details.serviceMessage;
    this.retryAfterMs = details.retryAfterMs;
    this.notSent = details.notSent ?? false;
  }

  private static describe(summary: string, d: ServiceErrorDetails): string {
    const parts = [`${d.method} ${d.path}: ${summary}`];
    if (d.status !== undefined) parts.push(`HTTP ${d.status}`);
    if (d.errorCode) parts.push(`errorCode ${d.errorCode}`);
    if (d.serviceMessage) parts.push(`service said: ${d.serviceMessage}`);
    if (d.diagnosticCode) parts.push(`diagnosticCode ${d.diagnosticCode}`);
    return parts.join('; ');
  }

  /**
   * This failure, of a call that never left because it had no token to send
   * (the exchange failed): `notSent`. A copy, since every call waiting on
   * that exchange gets the same error.
   */
  beforeSending(): this {
    const copy = Object.create(Object.getPrototypeOf(this)) as this;
    Object.defineProperties(copy, Object.getOwnPropertyDescriptors(this));
    Object.defineProperty(copy, 'notSent', { value: true, enumerable: true });
    return copy;
  }

  /** A plain, secret-free object for logs and failure details. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      type: this.type,
      message: this.message,
      endpoint: this.endpoint,
      method: this.method,
      path: this.path,
      status: this.status,
      errorCode: this.errorCode,
      diagnosticCode: this.diagnosticCode,
      retryAfterMs: this.retryAfterMs,
    };
  }
}

/** Whether a failed call never reached the service, so spent nothing: it said so, or it had no token to send. */
export function neverSent(err: unknown): boolean {
  return (err instanceof ServiceError && err.notSent) || err instanceof TokenSourceError;
}

export class Unauthorized extends ServiceError {
  override readonly name = 'ServiceUnauthorizedError';
  readonly type = 'Unauthorized' as const;
  readonly tokenRotated: boolean;
  constructor(details: ServiceErrorDetails) {
    super('the token is missing, invalid or expired', details);
    this.tokenRotated = details.tokenRotated ?? false;
  }
}

export class Forbidden extends ServiceError {
  override readonly name = 'ServiceForbiddenError';
  readonly type = 'Forbidden' as const;
  readonly permission: string;
  constructor(details: ServiceErrorDetails & { permission: string }) {
    super(`the token lacks the "${details.permission}" permission`, details);
    this.permission = details.permission;
  }
}

export class NotFound extends ServiceError {
  override readonly name = 'ServiceNotFoundError';
  readonly type = 'NotFound' as const;
  constructor(details: ServiceErrorDetails) {
    super('not found', details);
  }
}

export class BadRequest extends ServiceError {
  override readonly name = 'ServiceBadRequestError';
  readonly type = 'BadRequest' as const;
  constructor(details: ServiceErrorDetails) {
    super('the service rejected the request', details);
  }
}

/**
 * The errorCode of a spent daily (or rolling 24-hour) quota: the spec's only
 * documented one (429-101); the import paths' own codes are unpublished. Any
 * other 429 (the concurrency codes, a bare code, a gateway's plain text) is a
 * short refusal, retried after its Retry-After or with backoff.
 */
const DAILY_LIMIT_ERROR_CODE = '429-101';

export class RateLimited extends ServiceError {
  override readonly name = 'ServiceRateLimitedError';
  readonly type = 'RateLimited' as const;
  constructor(details: ServiceErrorDetails) {
    super('rate limited', details);
  }

  get isDailyLimit(): boolean {
    return this.errorCode === DAILY_LIMIT_ERROR_CODE;
  }
}

export class ServerError extends ServiceError {
  override readonly name = 'ServiceServerError';
  readonly type = 'ServerError' as const;
  constructor(details: ServiceErrorDetails) {
    super('the service failed', details);
  }
}

/** A 2xx the worker cannot use: not JSON, or a field it relies on is missing or malformed. */
export class UnusableResponse extends ServiceError {
  override readonly name = 'ServiceUnusableResponseError';
  readonly type = 'UnusableResponse' as const;
  constructor(details: ServiceErrorDetails) {
    super('the answer cannot be used', details);
  }
}

export class Timeout extends ServiceError {
  override readonly name = 'ServiceTimeoutError';
  readonly type = 'Timeout' as const;
  constructor(details: ServiceErrorDetails) {
    super('timed out', details);
  }
}

export class Network extends ServiceError {
  override readonly name = 'ServiceNetworkError';
  readonly type = 'Network' as const;
  constructor(details: ServiceErrorDetails) {
    super('network failure', details);
  }
}
