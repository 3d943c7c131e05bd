/**
 * What every token source hands out, and how it fails: shared by the
 * sources of token-source.ts and client-credentials.ts, which would
 * otherwise import each other.
 */
export interface CurrentToken {
  token: string;
  /** Increments whenever the token changes: tells a 401 after a rotation from a 401 of a bad token. */
  version: number;
}

export interface TokenSource {
  current(): Promise<CurrentToken>;
  /** Told when the service answered 401 to the token of `version`; a source that can get a new one does. */
  rejected?(version: number): Promise<void>;
}

export class TokenSourceError extends Error {
  override readonly name = 'TokenSourceError';
}

/** Visible ASCII only: anything else could split the Authorization header. */
export const TOKEN_PATTERN = /^[\x21-\x7e]+$/;
