/**
 * The service token at start: COMPANY_DATA_TOKEN, or the file
 * COMPANY_DATA_TOKEN_FILE names, must hold one bearer token now. An empty
 * file (a secret mounted before it was filled, a sidecar that has not written
 * yet), one the worker cannot read, or a value with spaces ("Bearer ...")
 * would otherwise start a worker whose every request fails, and whose
 * imports retry their create without end. The worker still re-reads the file
 * on each request (the token source stats it), so a sidecar rotates it
 * without a restart; only start-up insists that it holds a token. A message
 * never shows the token.
 */
import { readFileSync } from 'node:fs';
import { TOKEN_PATTERN } from '../../activities/service/bearer-token.js';
import { ConfigError } from './errors.js';
import { type Parse, readableFile } from './parsers.js';
import { Secret } from './secret.js';

const EXPECTED = 'the bearer token (visible ASCII characters, no spaces)';

/** Why `text` is not one bearer token, or undefined when it is. */
function tokenProblem(text: string): string | undefined {
  if (text === '') return 'is empty';
  if (!TOKEN_PATTERN.test(text)) return 'holds spaces, line breaks or non-ASCII characters (not shown)';
  return undefined;
}

export const tokenText: Parse<Secret> = (text, name) => {
  const problem = tokenProblem(text);
  if (problem) throw new ConfigError(`${name} must be ${EXPECTED}; it ${problem}`);
  return new Secret(text);
};

export const tokenFile: Parse<string> = (text, name) => {
  const path = readableFile('holding the bearer token')(text, name);
  let content: string;
  try {
    content = readFileSync(path, 'utf8').trim();
  } catch (e) {
    throw new ConfigError(
      `${name} must be a file holding ${EXPECTED}; ${path} cannot be read (${(e as NodeJS.ErrnoException).code})`,
    );
  }
  const problem = tokenProblem(content);
  if (problem) throw new ConfigError(`${name} must be a file holding ${EXPECTED}; ${path} ${problem}`);
  return path;
};
