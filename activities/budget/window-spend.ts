/**
 * What the service itself shows was spent in a window, for a ledger that
 * starts without counts (its first start, or after an operator terminated or
 * reset it): every job created since the window began took one job creation,
 * and every one of them past `new` took one upload. Other clients of the
 * tenant are in the list too, which is what the service counts.
 *
 * The list's sorting and paging are unpublished, so every page is read
 * (bounded) and jobs are told apart by id. The calls are not reserved (the
 * ledger asking is the one that would grant them); they are reported back.
 */
import { Context } from '@temporalio/activity';
import type { WindowSpend, WindowSpendInput } from '../../workflows/contracts/activities.js';
import { toApplicationFailure } from '../failures.js';
import type { ServiceClient } from '../service/client.js';

const PER_PAGE = 100;
/** 100 pages of 100 jobs: far past a day's 1,200 job creations. */
const MAX_PAGES = 100;

export function makeCountWindowSpend(deps: { service: Pick<ServiceClient, 'listJobs'> }) {
  return async function countWindowSpend(input: WindowSpendInput): Promise<WindowSpend> {
    const sinceMs = Date.parse(input.windowStart);
    const seen = new Set<string>();
    const spend = { createJob: 0, submitData: 0, listJobs: 0 };
    try {
      for (let page = 1; page <= MAX_PAGES; page++) {
        const list = await deps.service.listJobs({ page, perPage: PER_PAGE });
        spend.listJobs += 1;
        const fresh = list.data.filter((job) => !seen.has(job.id));
        if (fresh.length === 0) break;
        for (const job of fresh) {
          seen.add(job.id);
          // A job without a readable creation time may be from this window: count it.
          const createdMs = Date.parse(job.createdAt ?? '');
          if (createdMs < sinceMs) continue;
          spend.createJob += 1;
          if (String(job.state).toLowerCase() !== 'new') spend.submitData += 1;
        }
      }
    } catch (err) {
      throw toApplicationFailure(err, Context.current().info.attempt);
    }
    return spend;
  };
}
