/**
 * Faults and liberties of the job endpoints that the service's reference
 * allows or that a real service shows (service-facts.md: sort, page size,
 * first page and listing delay are unpublished; no job field is required).
 * Each applies to the next `count` matching requests (default 1), like the
 * faults in faults.ts:
 * - commitCreateLate: a create answers 500 (or any status), times out (never
 *   answers) or resets the connection, and its job appears `afterMs` later;
 * - listCreatedLate: the next created job shows in lists only `afterMs` after
 *   its creation (reading it by id works at once);
 * - truncateNames: the next created job keeps only the first `maxChars` of its name;
 * - bigIds: the next created job gets an id above 2^53 (sent as a bare JSON number);
 * - ignoreSort: a list ignores `sort` (id order, oldest first);
 * - capPerPage: a list returns at most `max` jobs per page, whatever `perPage` asked;
 * - omitFields: a job answer (or list) leaves out these fields of each job,
 *   and `totalCount` of a list;
 * - holdProcessing: the next job to take its data stays `processing` until
 *   the faults are cleared (a long job that a test ends when it chooses);
 *   then its processing time runs out as usual, counted from the upload.
 */
import type { ServiceEndpoint } from '../../workflows/contracts/endpoints.js';
import { FaultQueue } from './faults.js';

export type LateCommitAnswer = { status: number } | 'timeout' | 'reset';

export interface LateCommit {
  afterMs: number;
  answer: LateCommitAnswer;
}

/** Every optional field of a job, and the list's totalCount: all the reference allows a service to leave out. */
const OPTIONAL_JOB_FIELDS = [
  'dataImportName',
  'entityType',
  'createdAt',
  'updatedAt',
  'source',
  'activityTypeId',
  'totalCount',
] as const;

export class JobFaults {
  private readonly lateCommit = new FaultQueue<LateCommit>();
  private readonly listLate = new FaultQueue<number>();
  private readonly truncate = new FaultQueue<number>();
  private readonly bigId = new FaultQueue<true>();
  private readonly noSort = new FaultQueue<true>();
  private readonly pageCap = new FaultQueue<number>();
  private readonly omit = new Map<ServiceEndpoint, FaultQueue<readonly string[]>>();
  private readonly hold = new FaultQueue<true>();

  commitCreateLate(fault: LateCommit, count?: number): void {
    requireNonNegative('commitCreateLate afterMs', fault.afterMs);
    const { answer } = fault;
    if (answer !== 'timeout' && answer !== 'reset' && !(Number.isInteger(answer.status) && answer.status >= 400)) {
      throw new Error(
        `commitCreateLate answer must be { status >= 400 }, 'timeout' or 'reset', got ${JSON.stringify(answer)}`,
      );
    }
    this.lateCommit.add(fault, count);
  }

  listCreatedLate(afterMs: number, count?: number): void {
    requireNonNegative('listCreatedLate afterMs', afterMs);
    this.listLate.add(afterMs, count);
  }

  truncateNames(maxChars: number, count?: number): void {
    if (!Number.isInteger(maxChars) || maxChars < 1) {
      throw new Error(`truncateNames maxChars must be a positive integer, got ${JSON.stringify(maxChars)}`);
    }
    this.truncate.add(maxChars, count);
  }

  bigIds(count?: number): void {
    this.bigId.add(true, count);
  }

  ignoreSort(count?: number): void {
    this.noSort.add(true, count);
  }

  capPerPage(max: number, count?: number): void {
    if (!Number.isInteger(max) || max < 1) {
      throw new Error(`capPerPage max must be a positive integer, got ${JSON.stringify(max)}`);
    }
    this.pageCap.add(max, count);
  }

  omitFields(endpoint: ServiceEndpoint, fields: readonly string[] = OPTIONAL_JOB_FIELDS, count?: number): void {
    const unknown = fields.filter((f) => !(OPTIONAL_JOB_FIELDS as readonly string[]).includes(f));
    if (unknown.length > 0) {
      throw new Error(`omitFields may leave out only ${OPTIONAL_JOB_FIELDS.join(', ')}, got ${unknown.join(', ')}`);
    }
    let queue = this.omit.get(endpoint);
    if (!queue) {
      queue = new FaultQueue();
      this.omit.set(endpoint, queue);
    }
    queue.add(fields, count);
  }

  holdProcessing(count?: number): void {
    this.hold.add(true, count);
  }

  takeLateCommit = () => this.lateCommit.take();
  takeListLate = () => this.listLate.take();
  takeTruncate = () => this.truncate.take();
  takeBigId = () => this.bigId.take() ?? false;
  takeIgnoreSort = () => this.noSort.take() ?? false;
  takePageCap = () => this.pageCap.take();
  takeOmit = (endpoint: ServiceEndpoint) => this.omit.get(endpoint)?.take();
  takeHoldProcessing = () => this.hold.take() ?? false;

  clear(): void {
    for (const queue of [
      this.lateCommit,
      this.listLate,
      this.truncate,
      this.bigId,
      this.noSort,
      this.pageCap,
      this.hold,
    ]) {
      queue.clear();
    }
    this.omit.clear();
  }
}

function requireNonNegative(what: string, value: number): void {
  if (!Number.isFinite(value) || value < 0) {
    throw new Error(`${what} must be a non-negative number, got ${JSON.stringify(value)}`);
  }
}
