/**
 * What an answer, or a failure to get one, becomes: the checked value of a
 * success, or one of the typed errors of errors.ts. Nothing here quotes the
 * token: every text taken from the service or the socket is redacted first.
 */
import { type ErrorBodyFacts, excerpt } from './error-body.js';
import {
  BadRequest,
  Forbidden,
  Network,
  NotFound,
  RateLimited,
  ServerError,
  type ServiceError,
  type ServiceErrorDetails,
  Timeout,
  Unauthorized,
  UnusableResponse,
} from './errors.js';
import { parseJsonExact } from './exact-json.js';
import { redact } from './redaction.js';
import { checkShape, type Shape } from './response-shapes.js';

const IMPORT_PERMISSION = 'Import Data';
const MAPPING_PERMISSION = 'custom sources and their field mappings (its name is unpublished)';
const INTEGRATION_ENDPOINTS = new Set(['getCustomSource', 'listCustomSources', 'getFieldMappings', 'putFieldMappings']);

export function parseSuccess<T>(shape: Shape<T>, text: string, details: ServiceErrorDetails, token: string): T {
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

/** The error of a status outside 2xx, with what its body said; a 401 says whether the token was replaced since. */
export function statusError(
  status: number,
  details: ServiceErrorDetails,
  facts: ErrorBodyFacts,
  tokenRotated: boolean,
): ServiceError {
  const d: ServiceErrorDetails = { ...details, status, ...facts };
  if (status === 400 || status === 413 || status === 422) return new BadRequest(d);
  if (status === 401) return new Unauthorized({ ...d, tokenRotated });
  if (status === 403) {
    const permission = INTEGRATION_ENDPOINTS.has(details.endpoint) ? MAPPING_PERMISSION : IMPORT_PERMISSION;
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

/** Retry-After as delay-seconds or an HTTP date (RFC 9110 10.2.3), in ms from `nowMs`; undefined when unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
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

/** A Timeout or Network error from what undici or the socket threw: its code and a token-free message only. */
export function transportError(e: unknown, details: ServiceErrorDetails, token: string): ServiceError {
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
