/**
 * The sweep board's decisions as pure functions over its view (no Temporal
 * imports): the workflow applies them one message at a time, and an
 * in-memory board in one process uses the same rules.
 */
import type {
  ClaimSweepRequest,
  PublishedSweep,
  PublishSweepRequest,
  SweepBoardView,
} from './contracts/sweep-board.js';

/** Sweeps kept for readers: a process that reads once per interval misses none of the last few. */
export const KEPT_SWEEPS = 4;
const MAX_LISTED_IDS = 100_000;

export function emptyBoard(): SweepBoardView {
  return { seq: 0, sweeps: [] };
}

/**
 * Why a claim is refused (no history is written for it), or undefined when it
 * is granted: a sweep was published since the claimer read the board (it
 * should read that one), or another process holds this round's lease and the
 * claimer did not judge it expired.
 */
export function claimProblem(view: SweepBoardView, request: unknown): string | undefined {
  const r = request as Partial<ClaimSweepRequest> | undefined;
  if (typeof r?.holder !== 'string' || r.holder.length === 0) return 'claimSweep: holder must be a non-empty string';
  if (typeof r.afterSeq !== 'number' || !Number.isInteger(r.afterSeq) || r.afterSeq < 0) {
    return 'claimSweep: afterSeq must be a count';
  }
  if (r.afterSeq < view.seq) return `claimSweep: sweep ${view.seq} is published; read it first`;
  const lease = view.lease;
  if (lease && lease.forSeq === view.seq && lease.holder !== r.holder && r.takeOverFrom !== lease.holder) {
    return `claimSweep: ${lease.holder} holds this round`;
  }
  return undefined;
}

export function claim(view: SweepBoardView, request: ClaimSweepRequest, nowMs: number): SweepBoardView {
  return { ...view, lease: { holder: request.holder, forSeq: view.seq, grantedAt: new Date(nowMs).toISOString() } };
}

export function publishProblem(request: unknown): string | undefined {
  const r = request as Partial<PublishSweepRequest> | undefined;
  if (typeof r?.holder !== 'string' || r.holder.length === 0) return 'publishSweep: holder must be a non-empty string';
  if (typeof r.startedAt !== 'string' || Number.isNaN(Date.parse(r.startedAt))) {
    return 'publishSweep: startedAt must be an ISO timestamp';
  }
  if (typeof r.calls !== 'number' || !Number.isInteger(r.calls) || r.calls < 0)
    return 'publishSweep: calls must be a count';
  if (r.onePage !== undefined && typeof r.onePage !== 'boolean') return 'publishSweep: onePage must be true or false';
  if (r.makerDone !== undefined && typeof r.makerDone !== 'boolean') {
    return 'publishSweep: makerDone must be true or false';
  }
  if (r.listed !== undefined) {
    if (!Array.isArray(r.listed) || r.listed.some((id) => typeof id !== 'string')) {
      return 'publishSweep: listed must be an array of job ids';
    }
    if (r.listed.length > MAX_LISTED_IDS) return `publishSweep: listed holds more than ${MAX_LISTED_IDS} ids`;
  }
  return undefined;
}

/**
 * A sweep that began after the newest one published becomes the next; an
 * older one (a frozen holder that woke late) is dropped: readers already
 * have a newer picture. Publishing ends the round's lease.
 */
export function publish(view: SweepBoardView, request: PublishSweepRequest): SweepBoardView {
  const newest = view.sweeps.at(-1);
  const lease = view.lease?.holder === request.holder ? undefined : view.lease;
  if (newest && Date.parse(newest.startedAt) >= Date.parse(request.startedAt)) return { ...view, lease };
  const sweep: PublishedSweep = {
    seq: view.seq + 1,
    holder: request.holder,
    startedAt: request.startedAt,
    calls: request.calls,
    ...(request.listed ? { listed: request.listed } : {}),
    ...(request.onePage ? { onePage: true } : {}),
    ...(request.makerDone ? { makerDone: true } : {}),
  };
  return { seq: sweep.seq, sweeps: [...view.sweeps, sweep].slice(-KEPT_SWEEPS), ...(lease ? { lease } : {}) };
}
