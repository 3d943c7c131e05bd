/**
 * The service's reference data (the sources an entity type accepts, an
 * activity type's fields) changes rarely, and every import's preflight needs
 * it: one worker keeps what it read for a while, so a night of a thousand
 * imports spends a handful of metadata reads, not a thousand. Concurrent
 * readers of the same entry share one read; a failed read is not kept.
 */
const REFERENCE_TTL_MS = 15 * 60 * 1000;

interface Entry {
  value: Promise<unknown>;
  expiresAtMs: number;
}

export class ReferenceCache {
  readonly #entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs = REFERENCE_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The cached value of `key`, or what `load` yields (then kept for the TTL). */
  get<T>(key: string, load: () => Promise<T>): Promise<T> {
    const cached = this.#entries.get(key);
    if (cached && this.now() < cached.expiresAtMs) return cached.value as Promise<T>;
    const value = load();
    const entry = { value, expiresAtMs: this.now() + this.ttlMs };
    this.#entries.set(key, entry);
    value.catch(() => {
      if (this.#entries.get(key) === entry) this.#entries.delete(key);
    });
    return value;
  }
}
