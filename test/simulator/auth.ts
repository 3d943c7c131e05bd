/**
 * Bearer-token checks. 401 when the token is missing, unknown or expired;
 * 403 when an import path is called without the `Import Data` permission.
 * Field-mapping paths need a valid token but no import permission (the
 * service names `Import Data` for import paths only). Also the bodies of a
 * careless service or gateway that quotes the token back in its refusal.
 */
import type { ServiceEndpoint } from '../../workflows/policy/endpoints.js';
import { authError, isMappingEndpoint } from './error-bodies.js';
import type { Reply } from './http-io.js';

/** How an echoing refusal spells the token: as a JSON encoder, a URL, or a base64'd header would. */
export const TOKEN_ECHOES = ['json-escaped', 'url-encoded', 'base64'] as const;
export type TokenEcho = (typeof TOKEN_ECHOES)[number];

export const IMPORT_PERMISSION = 'Import Data';

export interface TokenGrant {
  permissions: string[];
  expired?: boolean;
}

export type TokenTable = Record<string, TokenGrant>;

/** The answer to refuse with, or undefined when the caller may proceed. */
export function authorize(
  authorization: string | undefined,
  endpoint: ServiceEndpoint,
  tokens: TokenTable,
): Reply | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) return authError(401, 'Unauthorized: missing bearer token');
  const grant = Object.hasOwn(tokens, match[1]!) ? tokens[match[1]!] : undefined;
  if (!grant) return authError(401, 'Unauthorized: invalid token');
  if (grant.expired) return authError(401, 'Unauthorized: token expired');
  if (!isMappingEndpoint(endpoint) && !grant.permissions.includes(IMPORT_PERMISSION)) {
    return authError(403, `Forbidden: the token lacks the ${IMPORT_PERMISSION} permission`);
  }
  return undefined;
}

/** A JSON string's content as PHP's json_encode and some Java encoders write it: "\/" for a slash, \u00XX for + and =. */
function escapeJson(text: string): string {
  return JSON.stringify(text)
    .slice(1, -1)
    .replace(/\//g, '\\/')
    .replace(/[+=]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A refusal whose body quotes the request's bearer token, spelled as `echo` says. */
export function tokenEchoReply(status: number, authorization: string | undefined, echo: TokenEcho): Reply {
  const token = /^Bearer\s+(\S+)/i.exec(authorization ?? '')?.[1] ?? '';
  switch (echo) {
    case 'json-escaped': {
      const body = `{"status":"invalid token ${escapeJson(token)}"}`;
      return { status, body: Buffer.from(body), contentType: 'application/json' };
    }
    case 'url-encoded':
      return { status, body: { message: `rejected GET ?access_token=${encodeURIComponent(token)}` } };
    case 'base64':
      return { status, body: { status: `rejected header ${Buffer.from(`Bearer ${token}`).toString('base64')}` } };
  }
}

/** What a test must not find anywhere: each spelling of `token` that tokenEchoReply can send. */
export function tokenEchoSpellings(token: string): string[] {
  const header = Buffer.from(`Bearer ${token}`).toString('base64');
  const prefixBits = 'Bearer '.length * 8;
  return [
    token,
    encodeURIComponent(token),
    escapeJson(token),
    // The base64 characters made of the token's bits alone (its first and last may share bits with neighbours).
    header.slice(Math.ceil(prefixBits / 6), Math.floor((prefixBits + token.length * 8) / 6)),
  ];
}
