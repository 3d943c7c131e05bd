/**
 * The order `npm test` starts its files in when vitest has no timings yet (a
 * fresh clone, as in CI): the real-server files first, then the rest, each
 * group largest first as vitest's own order has it. The real-server files are
 * the long ones, and most of their time is spent waiting on the Temporal
 * server (heartbeat timeouts, timers, a budget window's reset); started first,
 * that waiting overlaps the other worker's files instead of being the run's
 * tail. With timings from an earlier run, vitest's order (failed, then
 * longest first) is kept.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const WAITS_ON_SERVERS = /real-server/;

export class WaitingFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const timed = sorted.every((f) => this.ctx.cache.getFileTestResults(this.cacheKey(f)) !== undefined);
    if (timed) return sorted;
    const waiting = sorted.filter((f) => WAITS_ON_SERVERS.test(f.moduleId));
    return [...waiting, ...sorted.filter((f) => !WAITS_ON_SERVERS.test(f.moduleId))];
  }

  /** The key vitest's results cache files under (BaseSequencer.sort builds it the same way). */
  private cacheKey(file: TestSpecification): string {
    return `${file.project.name}:${relative(this.ctx.config.root, file.moduleId)}`;
  }
}
