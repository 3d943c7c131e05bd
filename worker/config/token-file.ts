/**
 * COMPANY_DATA_TOKEN_FILE at start: the file must hold one bearer token now.
 * An empty file (a secret mounted before it was filled, a sidecar that has
 * not written yet) or one the worker cannot read would otherwise start a
 * worker whose every request fails, and whose imports retry their create
 * without end. The worker still re-reads the file on each request (the token
 * source stats it), so a sidecar rotates it without a restart; only start-up
 * insists that it holds a token. Never reads the token into a message.
 */
import { readFileSync } from 'node:fs';
import { TOKEN_PATTERN } from '../../activities/service/bearer-token.js';
import { ConfigError } from './errors.js';
import { type Parse, readableFile } from './parsers.js';

const EXPECTED = 'a file holding the bearer token (visible ASCII characters, no spaces)';

export const tokenFile: Parse<string> = (text, name) => {
  const path = readableFile('holding the bearer token')(text, name);
  let content: string;
  try {
    content = readFileSync(path, 'utf8').trim();
  } catch (e) {
    throw new ConfigError(`${name} must be ${EXPECTED}; ${path} cannot be read (${(e as NodeJS.ErrnoException).code})`);
  }
  if (content === '') throw new ConfigError(`${name} must be ${EXPECTED}; ${path} is empty`);
  if (!TOKEN_PATTERN.test(content)) {
    throw new ConfigError(
      `${name} must be ${EXPECTED}; ${path} holds spaces, line breaks or non-ASCII characters (not shown)`,
    );
  }
  return path;
};
