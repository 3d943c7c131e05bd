/**
 * Where the bearer token comes from: the environment (fixed for the process),
 * a file that a sidecar rewrites every few hours (tokens live 8 hours), or the
 * worker's own client-credentials exchange (client-credentials.ts).
 * The file is stat'ed on every call and re-read only when it changed, so a
 * rotation is picked up by the next request without a restart.
 */
import { readFile, stat } from 'node:fs/promises';
import type { TokenConfig } from '../../temporal.config.js';
import { type CurrentToken, TOKEN_PATTERN, type TokenSource, TokenSourceError } from './bearer-token.js';
import { ClientCredentialsTokenSource } from './client-credentials.js';

/** `requestTimeoutMs` bounds a client-credentials exchange, like any short call. */
export function createTokenSource(config: TokenConfig, options: { requestTimeoutMs?: number } = {}): TokenSource {
  if (config.kind === 'env') {
    const token = config.token.reveal().trim();
    if (!TOKEN_PATTERN.test(token)) {
      throw new TokenSourceError('COMPANY_DATA_TOKEN must be a bearer token of visible ASCII characters');
    }
    return { current: async () => ({ token, version: 1 }) };
  }
  if (config.kind === 'client-credentials') return new ClientCredentialsTokenSource(config, options);
  return new FileTokenSource(config.path);
}

class FileTokenSource implements TokenSource {
  #token = '';
  #version = 0;
  #fingerprint = '';

  constructor(private readonly path: string) {}

  async current(): Promise<CurrentToken> {
    let fingerprint: string;
    try {
      const s = await stat(this.path);
      // ino catches an atomic rename by the sidecar; mtime and size an in-place rewrite.
      fingerprint = `${s.ino}:${s.mtimeMs}:${s.ctimeMs}:${s.size}`;
    } catch (e) {
      throw new TokenSourceError(`token file ${this.path} cannot be read (${(e as NodeJS.ErrnoException).code})`);
    }
    if (fingerprint !== this.#fingerprint) {
      const token = await this.read();
      this.#fingerprint = fingerprint;
      if (token !== this.#token) {
        this.#token = token;
        this.#version += 1;
      }
    }
    return { token: this.#token, version: this.#version };
  }

  private async read(): Promise<string> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (e) {
      throw new TokenSourceError(`token file ${this.path} cannot be read (${(e as NodeJS.ErrnoException).code})`);
    }
    const token = text.trim();
    if (token === '') throw new TokenSourceError(`token file ${this.path} is empty; it must hold the bearer token`);
    if (!TOKEN_PATTERN.test(token)) {
      throw new TokenSourceError(`token file ${this.path} must hold one bearer token of visible ASCII characters`);
    }
    return token;
  }
}
