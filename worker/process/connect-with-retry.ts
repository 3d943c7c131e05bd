/**
 * A worker started before its Temporal server (compose, rolling restarts)
 * waits for it instead of exiting on the first refused connection: it tries
 * again with exponential backoff until WORKER_CONNECT_TIMEOUT has passed,
 * and says so on every try.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { transportFailureReason } from '../shared/transport-errors.js';

interface ConnectRetryOptions {
  /** Give up once this long has passed since the first try; 0 tries once. */
  timeoutMs: number;
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Called after each failed try that will be retried. */
  onRetry(attempt: number, reason: string, delayMs: number): void;
  now?: () => number;
}

export class ConnectFailedError extends Error {
  override readonly name = 'ConnectFailedError';
  constructor(
    readonly reason: string,
    readonly attempts: number,
  ) {
    super(reason);
  }
}

export async function connectWithRetry<T>(connect: () => Promise<T>, options: ConnectRetryOptions): Promise<T> {
  const now = options.now ?? Date.now;
  const maxDelayMs = options.maxDelayMs ?? 15_000;
  const deadline = now() + options.timeoutMs;
  let delayMs = options.initialDelayMs ?? 1_000;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await connect();
    } catch (err) {
      const reason = transportFailureReason(err);
      const left = deadline - now();
      if (left <= 0) throw new ConnectFailedError(reason, attempt);
      const wait = Math.min(delayMs, left);
      options.onRetry(attempt, reason, wait);
      await sleep(wait);
      delayMs = Math.min(delayMs * 2, maxDelayMs);
    }
  }
}
