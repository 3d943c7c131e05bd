/**
 * Random faults for a chaos soak, drawn from a seeded RNG so that a run can
 * be repeated: unlike the queued faults of faults.ts (which a test aims at
 * one request), each one strikes any matching request with a probability.
 * All are faults a real service or network shows, and none is an operator's
 * problem: a worker must get past every one of them by itself.
 *
 * - serverError: 500/502/503 before anything is applied;
 * - tooManyRequests: a short 429 (not the daily limit) with Retry-After 1;
 * - loseAnswer: the request is applied (a job made, a body accepted), then
 *   the socket is destroyed unanswered;
 * - slowAnswer: applied at once, answered up to `slowAnswerMaxMs` later;
 * - lateCreate: a create answers 500, times out or resets, and its job
 *   appears up to `lateCommitMaxMs` later;
 * - listLate: a new job shows in lists only up to `listLateMaxMs` later;
 * - resetUpload: a data PUT's connection is reset after a random number of
 *   body bytes from 0 to Content-Length inclusive: after the very last byte,
 *   too, with nothing committed;
 * - throttleUpload: a data PUT's body is read at `throttleBytesPerSec`, so
 *   that uploads last long enough to be cut off, frozen or killed midway.
 */
import type { ServiceEndpoint } from '../../workflows/contracts/endpoints.js';
import type { LateCommit } from './job-faults.js';

export interface ChaosRates {
  serverError?: number;
  tooManyRequests?: number;
  loseAnswer?: number;
  slowAnswer?: number;
  lateCreate?: number;
  listLate?: number;
  resetUpload?: number;
  throttleUpload?: number;
}

export interface ChaosOptions {
  seed: number;
  rates: ChaosRates;
  slowAnswerMaxMs?: number;
  lateCommitMaxMs?: number;
  listLateMaxMs?: number;
  throttleBytesPerSec?: number;
}

/** What chaos decided for one request; each field absent when that fault did not strike. */
export interface ChaosDraw {
  failStatus?: number;
  loseAnswer?: boolean;
  answerDelayMs?: number;
  lateCreate?: LateCommit;
  listLateMs?: number;
  resetUploadAfterBytes?: number;
  throttleBytesPerSec?: number;
}

export type ChaosCounts = Record<keyof ChaosRates, number>;

/** mulberry32: a small, fast, seedable PRNG; good enough to spread faults, and the same seed gives the same draws. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Endpoints whose request commits something: the only ones where a lost or slow answer matters. */
const COMMITTING: readonly ServiceEndpoint[] = ['createJob', 'submitData'];

export class Chaos {
  private readonly random: () => number;
  readonly counts: ChaosCounts = {
    serverError: 0,
    tooManyRequests: 0,
    loseAnswer: 0,
    slowAnswer: 0,
    lateCreate: 0,
    listLate: 0,
    resetUpload: 0,
    throttleUpload: 0,
  };

  constructor(private readonly options: ChaosOptions) {
    for (const [name, rate] of Object.entries(options.rates)) {
      if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1)) {
        throw new Error(`chaos rate ${name} must be a probability from 0 to 1, got ${JSON.stringify(rate)}`);
      }
    }
    this.random = seededRandom(options.seed);
  }

  /** Draws the faults of one request; the token exchange is left alone (its refusals are not what is tested). */
  draw(endpoint: ServiceEndpoint, contentLength: number | undefined): ChaosDraw {
    if (endpoint === 'tokenExchange') return {};
    if (this.strikes('serverError')) return { failStatus: [500, 502, 503][this.below(3)] };
    if (this.strikes('tooManyRequests')) return { failStatus: 429 };
    const draw: ChaosDraw = {};
    if (COMMITTING.includes(endpoint)) {
      if (this.strikes('loseAnswer')) draw.loseAnswer = true;
      else if (this.strikes('slowAnswer')) draw.answerDelayMs = this.below(this.options.slowAnswerMaxMs ?? 20_000);
    }
    if (endpoint === 'createJob') {
      if (this.strikes('lateCreate')) {
        const answers = [{ status: 500 }, 'timeout', 'reset'] as const;
        draw.lateCreate = {
          afterMs: this.below(this.options.lateCommitMaxMs ?? 10_000),
          answer: answers[this.below(3)] as LateCommit['answer'],
        };
      }
      if (this.strikes('listLate')) draw.listLateMs = this.below((this.options.listLateMaxMs ?? 15_000) + 1);
    }
    if (endpoint === 'submitData') {
      if (this.strikes('resetUpload')) draw.resetUploadAfterBytes = this.below((contentLength ?? 0) + 1);
      if (this.strikes('throttleUpload')) draw.throttleBytesPerSec = this.options.throttleBytesPerSec ?? 256 * 1024;
    }
    return draw;
  }

  private strikes(fault: keyof ChaosRates): boolean {
    const rate = this.options.rates[fault] ?? 0;
    if (rate === 0 || this.random() >= rate) return false;
    this.counts[fault] += 1;
    return true;
  }

  /** A whole number from 0 to n - 1. */
  private below(n: number): number {
    return Math.min(n - 1, Math.floor(this.random() * n));
  }
}
