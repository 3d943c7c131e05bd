/**
 * What the service itself shows was spent in a window, for a ledger that
 * starts without counts (its first start, or after an operator terminated or
 * reset it): every job created since the window began took one job creation,
 * and every one of them past `new` took one upload. Other clients of the
 * tenant are in the list too, which is what the service counts.
 *
 * Bounded: a window holds at most a day's creations, so the pages that can
 * hold them are few (`createLimit` / 100, plus one for jobs created while it
 * reads), however long the tenant's history. The list's order is unpublished,
 * so it is observed, never asked for (an unknown `sort` could be refused):
 * - newest first: pages are read from the first until one reaches past the
 *   window's start;
 * - oldest first (id order): the pages are counted from `totalCount` and read
 *   from the last, backwards, until one reaches past the window's start;
 * - anything else (no order, no `totalCount`): the first pages up to the
 *   bound, and the result says it is partial, so the ledger warns. The
 *   service's own daily-limit 429 still stops what a partial count misses.
 * The calls are not reserved (the ledger asking is the one that would grant
 * them); they are reported back.
 */
import { Context } from '@temporalio/activity';
import type { WindowSpend, WindowSpendInput } from '../../workflows/contracts/activities.js';
import { toApplicationFailure } from '../failures.js';
import type { ServiceClient } from '../service/client.js';
import type { ImportJobList } from '../service/types.js';

const PER_PAGE = 100;
/** The service's published daily limit of job creations, when the ledger does not say its own. */
const DEFAULT_CREATE_LIMIT = 1_200;
/** The probe for the last page stops here: 2^20 pages of 100 is far past any history. */
const MAX_PROBED_PAGE = 2 ** 20;

type Lister = Pick<ServiceClient, 'listJobs'>;

export function makeCountWindowSpend(deps: { service: Lister }) {
  return async function countWindowSpend(input: WindowSpendInput): Promise<WindowSpend> {
    try {
      return await new WindowCount(deps.service, input).count();
    } catch (err) {
      throw toApplicationFailure(err, Context.current().info.attempt);
    }
  };
}

type Order = 'newest first' | 'oldest first' | 'unknown';

/*
 * How many calls at most: the first page; for oldest first, the hint's two
 * pages and the probe's (about 2 log2 of the pages) to find the last; then
 * the pages a window can fill (createLimit / 100 + 1).
 */

class WindowCount {
  private readonly sinceMs: number;
  private readonly maxPages: number;
  private readonly seen = new Set<string>();
  private readonly spend: WindowSpend = { createJob: 0, submitData: 0, listJobs: 0 };

  constructor(
    private readonly service: Lister,
    input: WindowSpendInput,
  ) {
    this.sinceMs = Date.parse(input.windowStart);
    this.maxPages = Math.ceil((input.createLimit ?? DEFAULT_CREATE_LIMIT) / PER_PAGE) + 1;
  }

  async count(): Promise<WindowSpend> {
    const first = await this.page(1);
    if (first.data.length === 0) return this.done(true);
    const order = orderOf(first);
    if (order === 'newest first') return this.forwardToStart(first);
    if (order === 'oldest first') {
      const last = await this.lastPage(first);
      return last === undefined ? this.done(false) : this.backwardToStart(last);
    }
    // No order to go by: the first pages up to the bound.
    for (let page = 2; this.spend.listJobs < this.maxPages; page++) {
      if ((await this.page(page)).data.length === 0) return this.done(true);
    }
    return this.done(false);
  }

  private reachedStart(list: ImportJobList): boolean {
    return list.data.some((job) => createdMs(job) < this.sinceMs);
  }

  private async forwardToStart(first: ImportJobList): Promise<WindowSpend> {
    let list = first;
    for (let page = 2; !this.reachedStart(list); page++) {
      if (this.spend.listJobs >= this.maxPages) return this.done(false);
      list = await this.page(page);
      if (list.data.length === 0) return this.done(true);
    }
    return this.done(true);
  }

  /** From the last page (already read) back, until a page reaches past the window's start. */
  private async backwardToStart(last: { page: number; list: ImportJobList }): Promise<WindowSpend> {
    const bound = this.spend.listJobs + this.maxPages;
    let { page, list } = last;
    while (!this.reachedStart(list) && page > 1) {
      if (this.spend.listJobs >= bound) return this.done(false);
      page -= 1;
      list = await this.page(page);
    }
    return this.done(true);
  }

  /**
   * The last non-empty page and its jobs. totalCount hints at it (checked:
   * that page has jobs and the next has none); without a trustworthy hint, a
   * doubling probe then a halving search find it in about 2 log2(pages) calls.
   */
  private async lastPage(first: ImportJobList): Promise<{ page: number; list: ImportJobList } | undefined> {
    const per = first.data.length;
    if (first.totalCount !== undefined && first.totalCount <= per) return { page: 1, list: first };
    const hinted = first.totalCount !== undefined ? Math.ceil(first.totalCount / per) : undefined;
    if (hinted !== undefined) {
      const list = await this.page(hinted);
      if (list.data.length > 0 && (await this.page(hinted + 1)).data.length === 0) return { page: hinted, list };
    }
    let full = { page: 1, list: first };
    let empty: number | undefined;
    for (let page = 2; empty === undefined; page *= 2) {
      if (page > MAX_PROBED_PAGE) return undefined;
      const list = await this.page(page);
      if (list.data.length === 0) empty = page;
      else full = { page, list };
    }
    while (empty - full.page > 1) {
      const mid = Math.floor((full.page + empty) / 2);
      const list = await this.page(mid);
      if (list.data.length === 0) empty = mid;
      else full = { page: mid, list };
    }
    return full;
  }

  private async page(page: number): Promise<ImportJobList> {
    const list = await this.service.listJobs({ page, perPage: PER_PAGE });
    this.spend.listJobs += 1;
    for (const job of list.data) {
      if (this.seen.has(job.id)) continue;
      this.seen.add(job.id);
      if (createdMs(job) < this.sinceMs) continue;
      this.spend.createJob += 1;
      if (String(job.state).toLowerCase() !== 'new') this.spend.submitData += 1;
    }
    return list;
  }

  private done(complete: boolean): WindowSpend {
    return complete ? this.spend : { ...this.spend, partial: true };
  }
}

/** A job without a readable creation time may be from this window: it counts as created in it. */
function createdMs(job: { createdAt?: string }): number {
  const ms = Date.parse(job.createdAt ?? '');
  return Number.isNaN(ms) ? Number.POSITIVE_INFINITY : ms;
}

/**
 * The order a page shows by its creation times, or, where they are all the
 * same (jobs made in one batch), by its ids (the service numbers its jobs
 * as it makes them); 'unknown' when it shows none, or both.
 */
function orderOf(list: ImportJobList): Order {
  const times = list.data.map((job) => createdMs(job));
  if (times.length < 2 || times.some((ms) => !Number.isFinite(ms))) return 'unknown';
  const byTime = directionOf(times.slice(1).map((ms, i) => ms - (times[i] as number)));
  if (byTime !== 'unknown' || times.some((ms) => ms !== times[0])) return byTime;
  const ids = list.data.map((job) => (/^\d+$/.test(job.id) ? BigInt(job.id) : undefined));
  if (ids.some((id) => id === undefined)) return 'unknown';
  return directionOf(ids.slice(1).map((id, i) => Number((id as bigint) - (ids[i] as bigint))));
}

function directionOf(steps: number[]): Order {
  if (steps.every((d) => d <= 0) && steps.some((d) => d < 0)) return 'newest first';
  if (steps.every((d) => d >= 0) && steps.some((d) => d > 0)) return 'oldest first';
  return 'unknown';
}
