/**
 * Tokens: the client-credentials exchange (`POST /auth/v1/token`, which
 * issues tokens that expire) and the bearer-token checks. 401 when the token
 * is missing, unknown or expired; 403 when an import path is called without
 * the `Import Data` permission. Field-mapping paths need a valid token but no
 * import permission (the service names `Import Data` for import paths only).
 * Also the bodies of a careless service or gateway that quotes the token back
 * in its refusal.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { ServiceEndpoint } from '../../workflows/contracts/endpoints.js';
import { authError, importError, isIntegrationEndpoint } from './error-bodies.js';
import { json, parseJson, type Reply, readSmallBody } from './http-io.js';

/** How an echoing refusal spells the token: as a JSON encoder, a URL, or a base64'd header would. */
export const TOKEN_ECHOES = ['json-escaped', 'url-encoded', 'base64'] as const;
export type TokenEcho = (typeof TOKEN_ECHOES)[number];

export const IMPORT_PERMISSION = 'Import Data';

interface TokenGrant {
  permissions: string[];
  expired?: boolean;
  /** Issued tokens expire at this instant (simulator clock). */
  expiresAtMs?: number;
}

export type TokenTable = Record<string, TokenGrant>;

/** A client the exchange knows: its secret and the permissions of the tokens it gets. */
interface ClientGrant {
  secret: string;
  permissions: string[];
}

export type ClientTable = Record<string, ClientGrant>;

/** The production lifetime (service-facts.md): 8 hours. */
export const TOKEN_LIFETIME_SECONDS = 28_800;

export class TokenAuthority {
  private readonly tokens: TokenTable;
  /** Tokens issued by the exchange, in order, for tests that look at them. */
  readonly issued: string[] = [];

  constructor(
    tokens: TokenTable,
    private readonly clients: ClientTable,
    private readonly lifetimeSeconds: number,
    private readonly now: () => number,
    /** Answer without `expiresIn`; the token still lives lifetimeSeconds. */
    private readonly omitExpiresIn = false,
  ) {
    // A copy: issuing and expiring must not touch the caller's (often shared) table.
    this.tokens = structuredClone(tokens);
  }

  /** The answer to refuse with, or undefined when the caller may proceed. */
  authorize(authorization: string | undefined, endpoint: ServiceEndpoint): Reply | undefined {
    if (endpoint === 'tokenExchange') return undefined;
    const token = bearerOf(authorization);
    if (token === undefined) return authError(401, 'Unauthorized: missing bearer token');
    const grant = Object.hasOwn(this.tokens, token) ? this.tokens[token] : undefined;
    if (!grant) return authError(401, 'Unauthorized: invalid token');
    if (grant.expired || (grant.expiresAtMs !== undefined && this.now() >= grant.expiresAtMs)) {
      return authError(401, 'Unauthorized: token expired');
    }
    if (!isIntegrationEndpoint(endpoint) && !grant.permissions.includes(IMPORT_PERMISSION)) {
      return authError(403, `Forbidden: the token lacks the ${IMPORT_PERMISSION} permission`);
    }
    return undefined;
  }

  /** A token issued outside the exchange (a sidecar's rotation), with the import permission. */
  add(token: string): void {
    this.tokens[token] = { permissions: [IMPORT_PERMISSION] };
  }

  /** The expireTokenNext fault: the request's token dies now, long before its time. */
  expire(authorization: string | undefined): void {
    const token = bearerOf(authorization);
    if (token !== undefined && Object.hasOwn(this.tokens, token)) this.tokens[token]!.expired = true;
  }

  /** POST /auth/v1/token: 400 for a missing or wrong parameter, as the production reference says. */
  async exchange(req: IncomingMessage): Promise<Reply> {
    const body = await readSmallBody(req);
    const input = 'text' in body ? parseJson(body.text) : undefined;
    const { grantType, clientId, clientSecret } = (input ?? {}) as Record<string, unknown>;
    if (grantType !== 'client_credentials') {
      return importError(400, `grantType must be client_credentials, got ${JSON.stringify(grantType)}`);
    }
    if (typeof clientId !== 'string' || typeof clientSecret !== 'string') {
      return importError(400, 'clientId and clientSecret are required');
    }
    const client = Object.hasOwn(this.clients, clientId) ? this.clients[clientId] : undefined;
    if (!client || client.secret !== clientSecret) return importError(400, 'invalid client credentials');
    // Standard base64, as many opaque tokens are: its / + = change when a careless echo escapes them.
    const token = `sim-issued-${randomBytes(20).toString('base64')}`;
    this.tokens[token] = {
      permissions: [...client.permissions],
      expiresAtMs: this.now() + this.lifetimeSeconds * 1000,
    };
    this.issued.push(token);
    const lifetime = this.omitExpiresIn ? {} : { expiresIn: this.lifetimeSeconds };
    return json(200, { accessToken: token, tokenType: 'bearer', ...lifetime });
  }
}

function bearerOf(authorization: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
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
  const token = bearerOf(authorization) ?? '';
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
