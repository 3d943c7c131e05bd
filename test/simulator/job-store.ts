/**
 * The simulator's import jobs and field mappings, and the asynchronous
 * processing that moves an accepted job to completed or failed.
 */
import {
  describeField,
  headerThroughMappings,
  labelKey,
  missingFields,
  missingLabels,
  type RequiredFields,
} from '../../activities/csv/required-labels.js';
import { type EntityType, MAPPING_OBJECT_TYPE_OF_ENTITY } from '../../workflows/contracts/import-input.js';
import { requiredActivityFields } from './reference-data.js';
import type { CustomSource, JobRecord, ServiceRecord } from './types.js';

/** The source every tenant has: a job on it reads display-name labels only. */
const DEFAULT_SOURCE = 'CSV';

interface NewJob {
  dataImportName: string;
  entityType: string;
  source: string;
  activityTypeId?: number;
}

interface AcceptedUpload {
  bytes: number;
  sha256: string;
  header: string[] | undefined;
  listAction: string | undefined;
}

/** The first id the bigIds fault hands out: 2^53 + 1, the smallest integer a double cannot hold. */
const FIRST_BIG_ID = 2n ** 53n + 1n;

interface CreateOptions {
  /** Give the job an id above 2^53. */
  bigId?: boolean;
  /** Show the job in lists only this long after its creation. */
  listedAfterMs?: number;
}

export class JobStore {
  private readonly jobsById = new Map<string, JobRecord>();
  private readonly mappings = new Map<string, unknown[]>();
  private readonly sources = new Map<string, CustomSource>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Jobs the holdProcessing fault keeps `processing`: when each would have ended, and how it ends. */
  private readonly held = new Map<string, { dueMs: number; end: () => void }>();
  private nextId = 100_001n;
  private nextBigId = FIRST_BIG_ID;
  private lateCreates = 0;
  jobOutcome: 'completed' | 'failed' = 'completed';

  constructor(
    private readonly now: () => number,
    /** Time from an accepted upload to its outcome; the budget benchmark changes it between scenarios. */
    public processingMs: number,
    customSources: readonly CustomSource[],
    /** The fields each entity type needs (display name, inferred service name). */
    private readonly requiredFields: RequiredFields,
  ) {
    for (const source of customSources) this.sources.set(source.id, { ...source });
  }

  create(fields: NewJob, options: CreateOptions = {}): JobRecord {
    const at = this.isoNow();
    const id = options.bigId ? this.nextBigId++ : this.nextId++;
    const job: JobRecord = {
      id: id.toString(),
      ...fields,
      state: 'new',
      createdAt: at,
      updatedAt: at,
      bytesReceived: 0,
      uploads: 0,
      acceptedBodies: [],
      ...(options.listedAfterMs === undefined
        ? {}
        : { listedFrom: new Date(this.now() + options.listedAfterMs).toISOString() }),
    };
    this.jobsById.set(job.id, job);
    return job;
  }

  /**
   * `count` jobs that completed before today's window (created two days ago),
   * as a tenant's history: lists page through them, the daily counts do not.
   */
  prefillCompleted(count: number, entityType = 'Account'): void {
    const at = new Date(this.now() - 2 * 86_400_000).toISOString();
    for (let i = 0; i < count; i++) {
      const id = (this.nextId++).toString();
      this.jobsById.set(id, {
        id,
        dataImportName: `history-${id}`,
        entityType,
        source: 'CSV',
        state: 'completed',
        createdAt: at,
        updatedAt: at,
        bytesReceived: 1,
        acceptedBodies: [],
        uploads: 1,
      });
    }
  }

  /** Creates the job after `ms` (a create that commits late), unless the store stops first. */
  createLater(ms: number, fields: NewJob, options: CreateOptions): void {
    this.lateCreates += 1;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.lateCreates -= 1;
      this.create(fields, options);
    }, ms);
    this.timers.add(timer);
  }

  /** Creates that were answered but have not committed yet. */
  lateCreatesPending(): number {
    return this.lateCreates;
  }

  get(id: string): JobRecord | undefined {
    return this.jobsById.get(id);
  }

  /** Whether a list shows the job yet (the listCreatedLate fault delays it). */
  isListed(job: JobRecord): boolean {
    return job.listedFrom === undefined || Date.parse(job.listedFrom) <= this.now();
  }

  all(): JobRecord[] {
    return [...this.jobsById.values()];
  }

  /**
   * Takes the job's data: the job moves to processing now and to its outcome
   * after processingMs (a `held` job only once releaseHeld() lets it go). The
   * outcome is decided here, from the mappings that apply at upload time, as
   * the service validates the file it received.
   */
  accept(job: JobRecord, upload: AcceptedUpload, options: { held?: boolean } = {}): void {
    job.acceptedBodies.push({ bytes: upload.bytes, sha256: upload.sha256, at: this.isoNow() });
    if (job.state !== 'new') {
      // A lenient service took a second complete body that began while the job was new: it is counted, and
      // the job keeps the state its first body gave it.
      job.uploads += 1;
      job.updatedAt = this.isoNow();
      return;
    }
    job.state = 'processing';
    job.updatedAt = this.isoNow();
    job.bytesReceived = upload.bytes;
    job.sha256 = upload.sha256;
    job.header = upload.header;
    job.listAction = upload.listAction;
    job.uploads += 1;
    const failureReason =
      this.headerProblem(job, upload.header) ??
      (this.jobOutcome === 'failed' ? 'the simulator was told to fail jobs (setJobOutcome)' : undefined);
    const end = () => {
      job.state = failureReason ? 'failed' : 'completed';
      if (failureReason) job.failureReason = failureReason;
      job.updatedAt = this.isoNow();
    };
    if (options.held) this.held.set(job.id, { dueMs: this.now() + this.processingMs, end });
    else this.after(this.processingMs, end);
  }

  /** Lets every held job end: at once when its processing time has passed, else when it does. */
  releaseHeld(): void {
    for (const { dueMs, end } of this.held.values()) this.after(Math.max(0, dueMs - this.now()), end);
    this.held.clear();
  }

  private after(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, ms);
    this.timers.add(timer);
  }

  /** Per job the bodies it accepted; per name key and per content hash the jobs made (see ServiceRecord). */
  record(): Omit<ServiceRecord, 'dailyLimitRefusals'> {
    const bodiesByJob: ServiceRecord['bodiesByJob'] = {};
    const jobsByNameKey: ServiceRecord['jobsByNameKey'] = {};
    const jobsByContent: ServiceRecord['jobsByContent'] = {};
    for (const job of this.jobsById.values()) {
      bodiesByJob[job.id] = structuredClone(job.acceptedBodies);
      const key = nameKeyOf(job.dataImportName);
      jobsByNameKey[key] = [...(jobsByNameKey[key] ?? []), job.id];
      for (const sha of new Set(job.acceptedBodies.map((b) => b.sha256))) {
        jobsByContent[sha] = [...(jobsByContent[sha] ?? []), job.id];
      }
    }
    return { bodiesByJob, jobsByNameKey, jobsByContent };
  }

  isKnownSource(sourceId: string): boolean {
    return this.sources.has(sourceId);
  }

  customSource(sourceId: string): CustomSource | undefined {
    const source = this.sources.get(sourceId);
    return source && { ...source };
  }

  customSources(): CustomSource[] {
    return [...this.sources.values()].map((source) => ({ ...source }));
  }

  /** The values a job's `source` may take, by name: CSV and every custom source (never an id). */
  listedSources(): string[] {
    return [DEFAULT_SOURCE, ...[...this.sources.values()].map((source) => source.name)];
  }

  fieldMappings(sourceId: string, objectType: string): unknown[] | undefined {
    return this.mappings.get(mappingKey(sourceId, objectType));
  }

  /** Replaces the whole set, as the service's PUT does; seeding also makes the source known (named after its id). */
  setFieldMappings(sourceId: string, objectType: string, mappings: unknown[]): void {
    if (!this.sources.has(sourceId)) this.sources.set(sourceId, { id: sourceId, name: `Custom source ${sourceId}` });
    this.mappings.set(mappingKey(sourceId, objectType), structuredClone(mappings));
  }

  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.held.clear();
  }

  isoNow(): string {
    return new Date(this.now()).toISOString();
  }

  /**
   * Why the job fails, if it does: a source the tenant does not list, or a
   * header that lacks a field its entity type (or activity type) requires
   * once read through the mappings of the job's custom source for the
   * entity's object type. A job on CSV, or of an entity type that takes no
   * mappings, reads display names only. Sets `readAs` to what the job read.
   */
  private headerProblem(job: JobRecord, header: string[] | undefined): string | undefined {
    if (!this.listedSources().some((name) => labelKey(name) === labelKey(job.source))) {
      return `source ${JSON.stringify(job.source)} is not one the tenant lists (${this.listedSources().join(', ')})`;
    }
    if (!header) return 'the file has no header row';
    const mappings = this.mappingsRead(job);
    job.readAs = headerThroughMappings(header, mappings);
    if (job.entityType === 'Activity') {
      const missing = missingLabels(header, requiredActivityFields(job.activityTypeId));
      if (missing.length === 0) return undefined;
      return `the header lacks the required label(s) ${missing.map((l) => JSON.stringify(l)).join(', ')} of activity type ${job.activityTypeId}`;
    }
    const required = this.requiredFields[job.entityType as Exclude<EntityType, 'Activity'>] ?? [];
    const missing = missingFields(header, mappings, required);
    if (missing.length === 0) return undefined;
    const through = mappings.length > 0 ? ` read through the mappings of source ${JSON.stringify(job.source)}` : '';
    return `the header${through} lacks ${missing.map(describeField).join(', ')}, required for ${job.entityType} imports`;
  }

  /** The mappings a job reads its header through: its custom source's set for the entity's object type. */
  private mappingsRead(job: JobRecord): { sourceFieldLabel: string; serviceFieldName: string }[] {
    const objectType = MAPPING_OBJECT_TYPE_OF_ENTITY[job.entityType as EntityType];
    const source = [...this.sources.values()].find((s) => labelKey(s.name) === labelKey(job.source));
    if (!objectType || !source) return [];
    return (this.fieldMappings(source.id, objectType) ?? []) as {
      sourceFieldLabel: string;
      serviceFieldName: string;
    }[];
  }
}

/** The `<key>` of a job named `[import:<key>] ...`, the worker's idempotency key; '' for a name without one. */
export function nameKeyOf(name: string): string {
  return /^\[import:([^\]]+)\]/.exec(name)?.[1] ?? '';
}

function mappingKey(sourceId: string, objectType: string): string {
  return `${sourceId}/${objectType}`;
}

/**
 * The job as the service's API shows it: none of the simulator's bookkeeping.
 * The id is a bigint, so that it goes out as a bare JSON number however large
 * (see http-io.ts); `omit` leaves out optional fields, as the reference allows.
 */
export function publicJob(job: JobRecord, omit: readonly string[] = []): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: BigInt(job.id),
    dataImportName: job.dataImportName,
    entityType: job.entityType,
    state: job.state,
    createdAt: job.createdAt,
    updatedAt: job.updatedAt,
    source: job.source,
  };
  if (job.activityTypeId !== undefined) view.activityTypeId = job.activityTypeId;
  for (const field of omit) delete view[field];
  return view;
}
