import { afterEach, describe, expect, it } from 'vitest';
import { makeCountWindowSpend } from '../../../activities/budget/window-spend.js';
import { createJob } from '../../bench/simulator-jobs.js';
import { type ServiceWorld, startServiceWorld } from '../environment.js';

describe("countWindowSpend: a ledger without counts reads the service's record of its window", () => {
  let world: ServiceWorld | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it.each([0, 5_000, 50_000])(
    'spends a bounded number of list calls with %i older jobs behind the window',
    async (history) => {
      world = await startServiceWorld({ completedHistory: history });
      const windowStart = new Date(Date.now() - 1_000).toISOString();
      for (let i = 0; i < 130; i++) await createJob(world.sim.baseUrl);

      const spent = await makeCountWindowSpend({ service: world.service })({ windowStart, createLimit: 1_200 });

      expect(spent).toMatchObject({ createJob: 130, submitData: 0 });
      expect(spent.partial).toBeUndefined();
      // At most: the first page, the last page hinted and the one after it, the probe's, and the 13 pages
      // 1,200 creations can fill. Today's code read every page: 51 with 5,000 jobs behind, its 100 with 50,000.
      expect(spent.listJobs).toBeLessThanOrEqual(3 + 2 * Math.ceil(Math.log2(history / 100 + 2)) + 13);
      expect(world.sim.requests().filter((r) => r.endpoint === 'listJobs')).toHaveLength(spent.listJobs);
    },
    120_000,
  );
});
