/**
 * A secret that refuses to be printed, logged or serialised by accident: the
 * service token and the client secret travel through configuration, errors
 * and logs as `[redacted]`, and only `reveal()` gives the text.
 */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return '[redacted]';
  }
  toJSON(): string {
    return '[redacted]';
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return '[redacted]';
  }
}
