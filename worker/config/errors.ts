/**
 * How configuration refuses a value: one line naming the variable, what it
 * expects and what it got, so an operator fixes it without reading code.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function fail(variable: string, expected: string, got?: string): never {
  const shown = got === undefined ? 'it is not set' : `got ${JSON.stringify(got)}`;
  throw new ConfigError(`${variable} must be ${expected}; ${shown}`);
}
