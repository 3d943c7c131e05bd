/**
 * One watcher per worker process and tenant: it lists the tenant's jobs in
 * `processing` (GET /import/v1/jobs?state=processing, page by page until an
 * empty page, a page with nothing new, or a short page once the service has
 * shown that it honours perPage) and tells each waiting
 * awaitJobCompletion when its job is no longer listed. The waiting activity
 * then makes ONE status read to confirm the final state, so a job costs about
 * one status read whatever it takes, and the list calls are shared by every
 * job the process waits on.
 *
 * One sweep per interval for the whole tenant, whatever the fleet: the
 * processes share their sweeps through the tenant's sweep board (a Temporal
 * entity workflow, workflows/sweep-board.ts). When a sweep is due (an
 * interval after the newest one, paced by the ledger's count of list calls
 * left), a process claims the round, lists, and publishes what it saw; the
 * others read the board and tell their own waiters. A holder that dies,
 * freezes or is cut off loses the round when its lease runs out, and another
 * process takes it over. Nothing rests on the board for correctness: a
 * published sweep is a true picture of the list when it began (a sweep that
 * began earlier than the newest is dropped), a duplicate sweep costs only its
 * reserved calls, and a process that cannot reach the board sweeps for
 * itself. Waiters live in memory: a worker that dies loses them, and the
 * activities' retries register again in the next process. A sweep made by
 * another process is dated by that process's clock: skew between hosts moves
 * the listing grace below by as much.
 *
 * The sweep has no `entityType` filter: one sweep covers every entity type the
 * tenant imports (the jobs list's filters are all optional), so a tenant that
 * imports accounts and people pays for one sweep, not two.
 *
 * A job is "left" when two complete sweeps in a row do not list it that
 * count: every sweep after one listed it, and, for a job no sweep listed yet,
 * sweeps that began at least `listLateGraceMs` after it started waiting (a
 * job may be listed late, and a fast job may end before any sweep lists it).
 * For a job a sweep listed before, one such sweep is enough when its first
 * answer held every job it saw on a short page: no page was left to skip the
 * job from. On more pages one miss is enough too while the status reads have
 * one to spare (pace.ts statusReadsToSpare) for each job so told: its import
 * reads the job then, and a job that was only skipped between pages costs
 * one read and is watched again, told after two misses from then on. A sweep
 * cut short (budget, error) tells nobody anything. Every waiter falls back to per-job polls when the
 * list fails sweep after sweep, and every later one too once the service
 * shows rows in other states under the `processing` filter (it does not
 * honour the filter), and while the list calls left in the window are all
 * kept for creates. A worker process holds one tenant's credential, so it
 * makes one watcher (createActivities).
 */
import { randomUUID } from 'node:crypto';
import type { LedgerUsage } from '../../workflows/contracts/budget.js';
import type { SweepBoardView, SweepLease } from '../../workflows/contracts/sweep-board.js';
import { budgetWaitOf } from '../../workflows/failure-classification.js';
import type { BudgetGate } from '../budget/gate.js';
import { knownJobState } from '../job-state.js';
import type { CallOptions, ImportJobList, ListJobsQuery } from '../service/types.js';
import { ServiceCalls } from '../service-calls.js';
import { DEFAULT_RESERVE, paceFromUsage, type ReserveSettings, readReserve, statusReadsToSpare } from './pace.js';
import { LocalSweepBoard, type SweepBoard } from './sweep-board.js';

/**
 * A listed job counts as gone when this many complete sweeps in a row do not
 * list it: paging by number over a list that changes between pages (jobs
 * ending meanwhile shift the later pages) can skip a job in one sweep, and a
 * skipped job would cost a confirming read for nothing. A sweep whose first
 * answer held every job it saw, on a page short of `perPage`, had no later
 * page to skip one from: a single miss in it is enough for a job listed
 * before; so is one in any sweep while a confirming read can be spared.
 */
const SWEEPS_MISSED_TO_LEAVE = 2;

/** A due round is left to the newest sweep's maker at least this long (real time) before another claims it. */
const MIN_HANDOVER_GRACE_MS = 500;
/** The board is read again at most this often in service time while another process sweeps... */
const MIN_BOARD_READ_SERVICE_MS = 500;
/** ...and at most this often in real time, however compressed the service time. */
const MIN_BOARD_READ_REAL_MS = 5;

export interface JobWatcherSettings {
  /** The fastest sweep, when the budget allows it. */
  minSweepMs: number;
  /** How late the service may list a job that is processing. */
  listLateGraceMs: number;
  /** Jobs per page asked for (the service may send fewer). */
  perPage: number;
  /** Pages one sweep reads at most: a bound against a service that pages forever. */
  maxPages: number;
  /** Failed sweeps in a row after which listing is given up for per-job polls. */
  maxFailedSweeps: number;
  /**
   * How long a claimed round is left to its holder before another process
   * takes it over (the holder died, froze or was cut off). Real time: a late
   * holder costs one duplicate sweep, never a wrong answer.
   */
  sweepLeaseMs: number;
  reserve: ReserveSettings;
  /** Service time runs this many times faster than real time (tests, the budget benchmark); 1 in production. */
  compression: number;
}

export const DEFAULT_WATCHER_SETTINGS: JobWatcherSettings = {
  minSweepMs: 60_000,
  listLateGraceMs: 15_000,
  perPage: 50,
  maxPages: 200,
  maxFailedSweeps: 3,
  sweepLeaseMs: 60_000,
  reserve: DEFAULT_RESERVE,
  compression: 1,
};

export interface JobWatcherDeps {
  service: { listJobs(query: ListJobsQuery, options?: CallOptions): Promise<ImportJobList> };
  budget: BudgetGate;
  settings?: Partial<JobWatcherSettings>;
  /** Where the tenant's processes share their sweeps; without one, this process sweeps for itself. */
  board?: SweepBoard;
  now?: () => number;
}

export interface WatchOptions {
  /**
   * Tell the job's end at the first sweep that misses it, when a confirming
   * status read can be spared (true by default). A wait whose read after such
   * a word found the job still running asks for two misses instead.
   */
  confirmAtFirstMiss?: boolean;
}

/** `left`: no longer listed (`seen`: some sweep listed it before). `fallback`: poll the job instead. */
export type WatchOutcome = { kind: 'left'; seen: boolean } | { kind: 'fallback'; reason: string };

export interface Watch {
  readonly outcome: Promise<WatchOutcome>;
  /** Stops waiting (the activity was cancelled or reached its deadline). */
  cancel(): void;
  /** When the last complete sweep that listed the job in `processing` began; undefined until one did. */
  lastListedAtMs(): number | undefined;
}

interface Waiter {
  jobId: string;
  sinceMs: number;
  seen: boolean;
  /** The start of the last complete sweep that listed it. */
  listedAtMs?: number;
  /** Complete sweeps in a row that did not list it (counting as above). */
  missed: number;
  /** Whether a first miss may tell it, when a status read can be spared (see WatchOptions). */
  confirmAtFirstMiss: boolean;
  resolve(outcome: WatchOutcome): void;
}

export interface WatcherStats {
  /** Sweeps this process made (claimed and listed). */
  sweeps: number;
  listCalls: number;
  /** Sweeps by other processes that this one read from the board. */
  sweepsRead: number;
  lastSweepAt?: string;
}

export class JobWatcher {
  readonly settings: JobWatcherSettings;
  private readonly now: () => number;
  private readonly waiters = new Set<Waiter>();
  private readonly calls: ServiceCalls;
  private running = false;
  private failedSweeps = 0;
  private lastSweepCalls = 0;
  /** Whether the last sweep's first answer held every job it saw, on a short page. */
  private lastSweepOnePage = false;
  private givenUp: string | undefined;
  /**
   * Set once the service answered a page with exactly the rows asked for: it
   * honours perPage, so a shorter page is the last. Until then a sweep ends
   * only at an empty page or one with nothing new (the first page's number is
   * unpublished, so the first page is asked for without one, then 1, 2, ...).
   */
  private fullPagesHonoured = false;
  /** Set once page=1 repeated the unnumbered first page: the service counts pages from 1. */
  private pagesFromOne = false;
  private fallbackNoticed = false;
  /** Jobs this process polls one by one (fallback), for the pace of those polls. */
  polling = 0;
  /** When the next sweep is due (paced); undefined while no sweep is planned. For `status`: how fresh a wait's word is. */
  nextSweepAtMs: number | undefined;
  readonly stats: WatcherStats = { sweeps: 0, listCalls: 0, sweepsRead: 0 };
  private readonly board: SweepBoard;
  /** This process on the board. */
  readonly holder = `${process.pid}-${randomUUID()}`;
  /** The newest published sweep told to the waiters. */
  private readSeq = 0;
  /** When the newest sweep known (read or made) began: the next one is due an interval after it. */
  private newestSweepMs: number | undefined;
  /** The paced interval last read from the ledger, for which newest sweep, and when. */
  private pace: { afterSweepMs: number | undefined; atMs: number; intervalMs: number } | undefined;

  constructor(private readonly deps: JobWatcherDeps) {
    this.settings = { ...DEFAULT_WATCHER_SETTINGS, ...deps.settings };
    this.now = deps.now ?? Date.now;
    // Not an activity: its own request ids, unique per process, for the ledger's deduplication.
    this.calls = new ServiceCalls({ budget: deps.budget }, `watch-${randomUUID()}`);
    this.board = deps.board ?? new LocalSweepBoard();
  }

  get tenant(): string {
    return this.deps.budget.tenant;
  }

  /** Jobs waiting on this process, watched or polled. */
  get waiting(): number {
    return this.waiters.size + this.polling;
  }

  watch(jobId: string, options: WatchOptions = {}): Watch {
    if (this.givenUp) {
      const outcome = Promise.resolve<WatchOutcome>({ kind: 'fallback', reason: this.givenUp });
      return { outcome, cancel: () => undefined, lastListedAtMs: () => undefined };
    }
    let waiter!: Waiter;
    const outcome = new Promise<WatchOutcome>((resolve) => {
      const confirmAtFirstMiss = options.confirmAtFirstMiss ?? true;
      waiter = { jobId, sinceMs: this.now(), seen: false, missed: 0, confirmAtFirstMiss, resolve };
    });
    this.waiters.add(waiter);
    this.start();
    return { outcome, cancel: () => this.waiters.delete(waiter), lastListedAtMs: () => waiter.listedAtMs };
  }

  /** The reason listing was given up, the first time it is asked for (so that it is logged once). */
  takeFallbackNotice(reason: string): string | undefined {
    if (this.fallbackNoticed) return undefined;
    this.fallbackNoticed = true;
    return reason;
  }

  private start(): void {
    if (this.running) return;
    this.running = true;
    void this.loop().finally(() => {
      this.running = false;
      // A waiter that came while the loop was ending.
      if (this.waiters.size > 0 && !this.givenUp) this.start();
    });
  }

  /**
   * Each round: read the board and tell the waiters what sweeps published
   * since; when the next sweep is due (an interval after the newest), claim
   * the round and sweep, unless another process holds it and its lease has
   * not run out (then read again shortly).
   */
  private async loop(): Promise<void> {
    while (this.waiters.size > 0 && !this.givenUp) {
      const view = await this.readBoard();
      if (view) await this.tellPublished(view);
      const waitMs = await this.pacedIntervalMs();
      // Nobody left to tell (every waiter released to polls): a later watch starts the loop again.
      if (this.waiters.size === 0 || this.givenUp) return;
      const dueMs = (this.newestSweepMs ?? Number.NEGATIVE_INFINITY) + waitMs;
      const claimAtMs = dueMs + this.handoverGraceMs(view);
      if (claimAtMs > this.now()) {
        // Until it may claim the round, a process reads the board for the sweep another one makes.
        const readAtMs = Math.max(dueMs, this.now()) + this.readAgainMs();
        this.nextSweepAtMs = Math.min(claimAtMs, readAtMs);
        await pause(this.nextSweepAtMs - this.now());
        continue;
      }
      if (view && !(await this.claimRound(view))) {
        this.nextSweepAtMs = this.now() + this.readAgainMs();
        await pause(this.readAgainMs());
        continue;
      }
      await this.sweepOnce();
    }
  }

  /**
   * The process that made the newest sweep makes the next one when it is due
   * (its list calls come from the allowance it holds, with no ledger Update);
   * the others claim the round only this much later, when it is gone or slow:
   * a tenth of the interval, and at least half a second of real time, as its
   * claim is an Update, slower on a loaded server whatever the compression.
   * Meanwhile they read the board, sooner (boardReadAgainMs). A maker that
   * had no job left to watch said so when it published (its loop has ended):
   * then the round is anyone's when due.
   */
  private handoverGraceMs(view: SweepBoardView | undefined): number {
    const newest = view?.sweeps.at(-1);
    if (newest === undefined || newest.holder === this.holder || newest.makerDone === true) return 0;
    return Math.max(MIN_HANDOVER_GRACE_MS, this.settings.minSweepMs / 10);
  }

  /** How soon to read the board again while another process sweeps. */
  private readAgainMs(): number {
    return boardReadAgainMs(this.settings);
  }

  /** The board, or undefined when it cannot be read (this process then sweeps for itself). */
  private async readBoard(): Promise<SweepBoardView | undefined> {
    try {
      return await this.board.read();
    } catch {
      return undefined;
    }
  }

  /** Sweeps published since the last read, oldest first, told to this process's waiters. */
  private async tellPublished(view: SweepBoardView): Promise<void> {
    for (const sweep of view.sweeps) {
      if (sweep.seq <= this.readSeq) continue;
      this.readSeq = sweep.seq;
      this.lastSweepCalls = sweep.calls;
      this.stats.sweepsRead += 1;
      await this.tell(
        Date.parse(sweep.startedAt),
        sweep.listed ? new Set(sweep.listed) : 'unfiltered',
        sweep.onePage === true,
      );
    }
  }

  /** Whether this process may sweep the round: granted, or the board could not answer. */
  private async claimRound(view: SweepBoardView): Promise<boolean> {
    const lease = view.lease;
    const held = lease !== undefined && lease.forSeq === view.seq && lease.holder !== this.holder;
    if (held && !this.leaseRanOut(lease)) return false;
    try {
      const granted = await this.board.claim({
        holder: this.holder,
        afterSeq: view.seq,
        ...(held ? { takeOverFrom: lease.holder } : {}),
      });
      return granted !== undefined;
    } catch {
      return true;
    }
  }

  /** Judged on this process's clock against the board's: skew only moves when a duplicate sweep may happen. */
  private leaseRanOut(lease: SweepLease): boolean {
    return this.now() - Date.parse(lease.grantedAt) > this.settings.sweepLeaseMs;
  }

  /**
   * The paced interval, read from the ledger once per sweep known (and at
   * least once an interval), not at each read of the board while another
   * process sweeps a due round: in a fleet those reads come every tenth of an
   * interval from every process, and each would be a query of the ledger.
   */
  private async pacedIntervalMs(): Promise<number> {
    const known = this.pace;
    if (known && known.afterSweepMs === this.newestSweepMs && this.now() - known.atMs < this.settings.minSweepMs) {
      return known.intervalMs;
    }
    const intervalMs = await this.nextSweepInMs();
    this.pace = { afterSweepMs: this.newestSweepMs, atMs: this.now(), intervalMs };
    return intervalMs;
  }

  /** The paced interval; with no usage to go by (ledger unreachable), the fastest one. */
  private async nextSweepInMs(): Promise<number> {
    const callsPerRound = this.lastSweepCalls || Math.floor(this.waiters.size / this.settings.perPage) + 1;
    let usage: LedgerUsage;
    try {
      usage = await this.deps.budget.usage();
    } catch {
      return this.settings.minSweepMs;
    }
    const round = { callsPerRound, jobsWaiting: this.waiting, minIntervalMs: this.settings.minSweepMs };
    const { reserve, compression } = this.settings;
    if (usage.listJobs.remaining - readReserve('listJobs', usage, round.jobsWaiting, reserve) < callsPerRound) {
      // The list calls left are the creates' until the reset: these jobs are polled within the status budget.
      this.release('the list calls left in this window are kept for creates');
    }
    return paceFromUsage('listJobs', usage, round, this.now(), reserve, compression) ?? this.settings.minSweepMs;
  }

  private async sweepOnce(): Promise<void> {
    const startedMs = this.now();
    let listed: Set<string> | 'unfiltered';
    try {
      listed = await this.listProcessing();
      this.failedSweeps = 0;
    } catch (err) {
      // A spent budget is waited out by the pace (the ledger's usage shows it); other failures count.
      if (budgetWaitOf(err) === undefined && ++this.failedSweeps >= this.settings.maxFailedSweeps) {
        // These waiters poll; later ones try the list again.
        this.release(`listing processing jobs failed ${this.failedSweeps} times in a row: ${String(err)}`);
        this.failedSweeps = 0;
      }
      // Not due again at once: the next try comes an interval later.
      this.newestSweepMs = startedMs;
      return;
    }
    this.stats.sweeps += 1;
    // Told first, so that the board learns whether this process has any job left to watch.
    await this.tell(startedMs, listed, this.lastSweepOnePage);
    await this.publish(startedMs, listed);
  }

  /** Shares the sweep with the tenant's other processes; a board that cannot take it costs them their own sweep. */
  private async publish(startedMs: number, listed: Set<string> | 'unfiltered'): Promise<void> {
    try {
      const seq = await this.board.publish({
        holder: this.holder,
        startedAt: new Date(startedMs).toISOString(),
        calls: this.lastSweepCalls,
        ...(listed === 'unfiltered' ? {} : { listed: [...listed], onePage: this.lastSweepOnePage }),
        // Its loop ends with its last waiter: the others need not leave it the next round.
        ...(this.waiters.size === 0 ? { makerDone: true } : {}),
      });
      // Told already, not again on the next read.
      this.readSeq = Math.max(this.readSeq, seq);
    } catch {
      // The waiters of this process are told all the same.
    }
  }

  /** One complete sweep that began at `startedMs`, told to the waiters. */
  private async tell(startedMs: number, listed: Set<string> | 'unfiltered', onePage: boolean): Promise<void> {
    if (this.newestSweepMs === undefined || startedMs > this.newestSweepMs) this.newestSweepMs = startedMs;
    this.stats.lastSweepAt = new Date(this.newestSweepMs).toISOString();
    if (listed === 'unfiltered') {
      // For good: such a list can never show that a job left.
      this.givenUp = 'the service listed jobs in other states under state=processing (it does not honour the filter)';
      this.release(this.givenUp);
      return;
    }
    const spare = onePage ? { reads: 0 } : await this.confirmsToSpare(listed);
    for (const waiter of [...this.waiters]) {
      if (listed.has(waiter.jobId)) {
        waiter.seen = true;
        waiter.listedAtMs = startedMs;
        waiter.missed = 0;
      } else if (waiter.seen || startedMs - waiter.sinceMs >= this.settings.listLateGraceMs) {
        waiter.missed += 1;
        if (waiter.missed < SWEEPS_MISSED_TO_LEAVE && !leavesAtFirstMiss(waiter, onePage, spare)) continue;
        this.waiters.delete(waiter);
        waiter.resolve({ kind: 'left', seen: waiter.seen });
      }
    }
  }

  /**
   * Status reads to spare for jobs told at a first miss in a sweep of many
   * pages; the ledger is asked only when some waiter would take one, and
   * none are spared when it cannot answer.
   */
  private async confirmsToSpare(listed: Set<string>): Promise<{ reads: number }> {
    const wanted = [...this.waiters].some(
      (w) => w.seen && w.missed === 0 && w.confirmAtFirstMiss && !listed.has(w.jobId),
    );
    if (!wanted) return { reads: 0 };
    try {
      const usage = await this.deps.budget.usage();
      return { reads: statusReadsToSpare(usage, this.waiting, this.now(), this.settings.reserve) };
    } catch {
      return { reads: 0 };
    }
  }

  /** Every job listed in `processing`, or 'unfiltered' when a row shows another state. */
  private async listProcessing(): Promise<Set<string> | 'unfiltered'> {
    const seen = new Set<string>();
    let calls = 0;
    let first: string[] = [];
    let firstAnswer: number | undefined;
    this.lastSweepOnePage = false;
    try {
      // Until pages are known to count from 1, the first is asked for without a number, then 1, 2, ...
      let page: number | undefined = this.pagesFromOne ? 1 : undefined;
      for (let i = 0; i < this.settings.maxPages; i++) {
        const query: ListJobsQuery = {
          state: 'processing',
          perPage: this.settings.perPage,
          ...(page !== undefined ? { page } : {}),
        };
        const list = await this.calls.run('listJobs', () => this.deps.service.listJobs(query));
        calls += 1;
        // A row without a state cannot tell; a row in another state shows the filter was ignored.
        if (list.data.some((job) => job.state !== undefined && knownJobState(job.state) !== 'processing')) {
          return 'unfiltered';
        }
        const ids = list.data.map((job) => job.id);
        firstAnswer ??= ids.length;
        const fresh = ids.filter((id) => !seen.has(id));
        for (const id of fresh) seen.add(id);
        if (ids.length === this.settings.perPage) this.fullPagesHonoured = true;
        if (page === undefined) first = ids;
        // Page 1 repeating the unnumbered page shows that pages count from 1: later sweeps skip the repeat.
        const repeat = page === 1 && !this.pagesFromOne && first.length > 0 && sameIds(ids, first);
        if (repeat) this.pagesFromOne = true;
        const lastPage = this.fullPagesHonoured && ids.length < this.settings.perPage;
        // Page 1 may repeat the unnumbered page, so "nothing new" ends the list only past that page.
        const nothingNewEnds = page !== undefined && !repeat && (this.pagesFromOne || page >= 2);
        if (ids.length === 0 || lastPage || (nothingNewEnds && fresh.length === 0)) break;
        page = page === undefined ? 1 : page + 1;
      }
    } finally {
      this.stats.listCalls += calls;
      this.lastSweepCalls = calls;
    }
    this.lastSweepOnePage =
      firstAnswer !== undefined && firstAnswer < this.settings.perPage && seen.size === firstAnswer;
    return seen;
  }

  /** Every waiter now falls back to per-job polls. */
  private release(reason: string): void {
    for (const waiter of this.waiters) waiter.resolve({ kind: 'fallback', reason });
    this.waiters.clear();
  }
}

/**
 * How soon a process that did not make the newest sweep reads the board for
 * it, after it is due and again while its maker sweeps: a tenth of the sweep
 * interval, at least half a second of service time, so that in a compressed
 * run (tests, the budget benchmark) the other processes learn of a sweep as
 * soon after it as in production. The few real milliseconds below that keep
 * a very compressed fleet from reading the board without pause.
 */
function boardReadAgainMs(settings: Pick<JobWatcherSettings, 'minSweepMs' | 'compression'>): number {
  // minSweepMs is real time already (the compressed schedule's last delay).
  const tenth = settings.minSweepMs / 10;
  return Math.max(MIN_BOARD_READ_REAL_MS, MIN_BOARD_READ_SERVICE_MS / settings.compression, tenth);
}

/**
 * Whether one miss tells a listed job's end: always when the sweep fit on
 * one short page (no page to skip it from); on more pages when its wait
 * allows it and a confirming read can be spared (taken from `spare`). A job
 * never listed may be listed late, whatever the page: two misses for it.
 */
function leavesAtFirstMiss(waiter: Waiter, onePage: boolean, spare: { reads: number }): boolean {
  if (!waiter.seen) return false;
  if (onePage) return true;
  if (!waiter.confirmAtFirstMiss || spare.reads < 1) return false;
  spare.reads -= 1;
  return true;
}

/** A wait that does not keep the process alive on its own. */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}
