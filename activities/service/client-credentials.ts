/**
 * A token source that needs no sidecar: it exchanges the worker's client
 * credentials for a token (`POST /auth/v1/token`, service-facts.md), keeps it
 * while it is valid, and exchanges again before it expires (with a margin, so
 * a request never leaves with a token about to die) or once after a 401.
 * Concurrent activities share one exchange. The client secret is as secret as
 * the token: it is read only to be sent, and redacted from every error.
 */
import { readFile } from 'node:fs/promises';
import { Agent, type Dispatcher } from 'undici';
import { declaredDefault, type TokenConfig } from '../../temporal.config.js';
import { type CurrentToken, TOKEN_PATTERN, type TokenSource, TokenSourceError } from './bearer-token.js';
import { type ErrorBodyFacts, parseRedactedErrorBody } from './error-body.js';
import {
  BadRequest,
  Network,
  ServerError,
  type ServiceError,
  type ServiceErrorDetails,
  Timeout,
  Unauthorized,
} from './errors.js';

type ClientCredentials = Omit<Extract<TokenConfig, { kind: 'client-credentials' }>, 'kind'>;

interface ClientCredentialsOptions {
  now?: () => number;
  requestTimeoutMs?: number;
  dispatcher?: Dispatcher;
}

/** Refresh this long before expiry: a tenth of the lifetime, at most 5 minutes (so 5 minutes of an 8-hour token). */
const MAX_REFRESH_MARGIN_MS = 5 * 60 * 1000;
/** A token exchanged because of a 401 and refused again within this time is not exchanged again: the 401 is final. */
const MIN_REFRESH_AFTER_401_MS = 60 * 1000;
const DETAILS: Omit<ServiceErrorDetails, 'path'> = { endpoint: 'tokenExchange', method: 'POST' };

interface Held {
  token: string;
  version: number;
  refreshAtMs: number;
  /** When it was exchanged because the previous token met a 401. */
  after401AtMs?: number;
}

export class ClientCredentialsTokenSource implements TokenSource {
  readonly #credentials: ClientCredentials;
  readonly #now: () => number;
  readonly #timeoutMs: number;
  readonly #dispatcher: Dispatcher;
  #held: Held | undefined;
  #exchanging: Promise<Held> | undefined;
  #version = 0;

  constructor(credentials: ClientCredentials, options: ClientCredentialsOptions = {}) {
    this.#credentials = credentials;
    this.#now = options.now ?? Date.now;
    this.#timeoutMs = options.requestTimeoutMs ?? declaredDefault('COMPANY_DATA_REQUEST_TIMEOUT');
    this.#dispatcher = options.dispatcher ?? new Agent({ connections: 2, keepAliveTimeout: 10_000 });
  }

  async current(): Promise<CurrentToken> {
    const held = this.#held;
    if (held && this.#now() < held.refreshAtMs) return { token: held.token, version: held.version };
    const fresh = await this.exchange(false);
    return { token: fresh.token, version: fresh.version };
  }

  /**
   * The service refused the token of `version`: exchange it for a new one
   * (it may have been revoked, or the clocks disagree), unless that token is
   * itself a fresh replacement for a refused one. Then the 401 is final, so
   * credentials whose tokens the service refuses end in Unauthorized instead
   * of an exchange per call.
   */
  async rejected(version: number): Promise<void> {
    const held = this.#held;
    if (!held || held.version !== version) return;
    if (held.after401AtMs !== undefined && this.#now() - held.after401AtMs < MIN_REFRESH_AFTER_401_MS) return;
    await this.exchange(true);
  }

  /** One exchange at a time: whoever asks while one runs gets its answer. */
  private exchange(after401: boolean): Promise<Held> {
    this.#exchanging ??= this.fetchToken(after401)
      .then((held) => {
        this.#held = held;
        return held;
      })
      .finally(() => {
        this.#exchanging = undefined;
      });
    return this.#exchanging;
  }

  private async fetchToken(after401: boolean): Promise<Held> {
    const url = new URL(this.#credentials.tokenUrl);
    const details = { ...DETAILS, path: url.pathname };
    const secret = await this.secret();
    const sentAtMs = this.#now();
    let status: number;
    let text: string;
    let contentType: string;
    try {
      const res = await this.#dispatcher.request({
        origin: url.origin,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({
          grantType: 'client_credentials',
          clientId: this.#credentials.clientId,
          clientSecret: secret,
        }),
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      status = res.statusCode;
      contentType = String(res.headers['content-type'] ?? '');
      text = await res.body.text();
    } catch (e) {
      const err = e as { code?: unknown; name?: unknown };
      const code = typeof err.code === 'string' ? err.code : String(err.name ?? 'error');
      // Only the code: undici's errors and messages can hold the request, and with it the secret.
      const d = { ...details, serviceMessage: `the token exchange failed (${code})` };
      throw /TIMEOUT|TimeoutError/i.test(code) ? new Timeout(d) : new Network(d);
    }
    if (status !== 200) throw exchangeError(status, parseRedactedErrorBody(text, contentType, [secret]), details);
    return this.held(parseTokenAnswer(text, details), sentAtMs, after401);
  }

  private held(answer: { token: string; expiresInMs: number }, sentAtMs: number, after401: boolean): Held {
    // Counted from when the exchange was sent: the token's life began no earlier.
    const margin = Math.min(MAX_REFRESH_MARGIN_MS, answer.expiresInMs / 10);
    this.#version += 1;
    return {
      token: answer.token,
      version: this.#version,
      refreshAtMs: sentAtMs + answer.expiresInMs - margin,
      ...(after401 ? { after401AtMs: sentAtMs } : {}),
    };
  }

  private async secret(): Promise<string> {
    const source = this.#credentials.clientSecret;
    if ('value' in source) return source.value.reveal().trim();
    try {
      return (await readFile(source.file, 'utf8')).trim();
    } catch (e) {
      throw new TokenSourceError(
        `client secret file ${source.file} cannot be read (${(e as NodeJS.ErrnoException).code})`,
      );
    }
  }
}

function exchangeError(status: number, facts: ErrorBodyFacts, details: ServiceErrorDetails): ServiceError {
  const d = { ...details, status, ...facts };
  // The exchange answers 400 for a missing or wrong client id or secret: an operator must fix the credentials.
  if (status === 400)
    return new BadRequest({
      ...d,
      serviceMessage: `the client credentials were refused: ${d.serviceMessage ?? 'no reason given'}`,
    });
  if (status === 401 || status === 403) return new Unauthorized(d);
  return new ServerError(d);
}

function parseTokenAnswer(text: string, details: ServiceErrorDetails): { token: string; expiresInMs: number } {
  let body: { accessToken?: unknown; expiresIn?: unknown } | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const token = body?.accessToken;
  const expiresIn = body?.expiresIn;
  if (typeof token !== 'string' || !TOKEN_PATTERN.test(token)) {
    // Never quote the body: it holds a token, valid or not.
    throw new ServerError({
      ...details,
      status: 200,
      serviceMessage: 'the token exchange answered without a usable accessToken',
    });
  }
  if (typeof expiresIn !== 'number' || !Number.isFinite(expiresIn) || expiresIn <= 0) {
    throw new ServerError({
      ...details,
      status: 200,
      serviceMessage: `the token exchange answered expiresIn ${JSON.stringify(expiresIn)}; expected seconds > 0`,
    });
  }
  return { token, expiresInMs: expiresIn * 1000 };
}
