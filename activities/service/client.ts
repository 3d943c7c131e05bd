/**
 * The Company Data Service client: one typed method per endpoint the worker
 * calls. Each checks its arguments and builds its request from the endpoint
 * table (workflows/contracts/endpoints.ts); transport.ts sends it and maps every
 * failure to a typed error, and upload-body.ts streams an upload's bytes.
 */
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { declaredDefault } from '../../temporal.config.js';
import { endpointPath } from '../../workflows/contracts/endpoints.js';
import type { EntityType, FieldMapping, MappingObjectType } from '../../workflows/contracts/import-input.js';
import type { TokenSource } from './bearer-token.js';
import { shapes } from './response-shapes.js';
import { Transport } from './transport.js';
import type {
  ActivityFields,
  ActivityType,
  CallOptions,
  CreatedJob,
  CreateImportJobBody,
  CustomSource,
  FencedCallOptions,
  ImportJob,
  ImportJobList,
  ListJobsQuery,
  ResponseEvent,
  SubmitDataOptions,
} from './types.js';
import { UploadBody } from './upload-body.js';

export interface ServiceClientOptions {
  baseUrl: string;
  tokens: TokenSource;
  /** Whole-request limit of every call but the upload. */
  requestTimeoutMs?: number;
  /** An upload fails when no byte has moved for this long (not a limit on its total duration). */
  uploadIdleTimeoutMs?: number;
  /** How long the service may take to answer once the last byte of an upload is sent. */
  uploadResponseTimeoutMs?: number;
  /**
   * The longest an upload's body waits, after its first byte, for a refusal
   * on its headers (default 1 s). The wait is shorter once the service has
   * answered a call: a few times that answer's time (answerGraceMs).
   */
  uploadAnswerGraceMs?: number;
  /** Default: a keep-alive Agent with a bounded number of connections per origin. */
  dispatcher?: Dispatcher;
  onResponse?: (e: ResponseEvent) => void;
}

/** Job ids travel as decimal strings: int64 ids above 2^53 do not survive a JS number. */
function int64Id(name: string, v: unknown): string {
  if (typeof v !== 'string' || !/^[0-9]{1,19}$/.test(v) || BigInt(v) > 2n ** 63n - 1n) {
    throw new RangeError(`${name} must be an int64 id as a decimal string, got ${JSON.stringify(v)}`);
  }
  return v;
}

function positiveInt(name: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) {
    throw new RangeError(`${name} must be a positive integer, got ${JSON.stringify(v)}`);
  }
  return v;
}

function mappingParams(sourceId: string, objectType: MappingObjectType) {
  if (!/^[0-9]{1,19}$/.test(sourceId)) {
    throw new RangeError(`sourceId must be an int64 as a decimal string, got ${JSON.stringify(sourceId)}`);
  }
  return { source_id: sourceId, object_type: objectType };
}

export class ServiceClient {
  readonly #transport: Transport;
  readonly #uploadIdleTimeoutMs: number;
  readonly #uploadAnswerGraceMs: number;

  constructor(options: ServiceClientOptions) {
    this.#transport = new Transport({
      baseUrl: options.baseUrl,
      tokens: options.tokens,
      requestTimeoutMs: options.requestTimeoutMs ?? declaredDefault('COMPANY_DATA_REQUEST_TIMEOUT'),
      uploadResponseTimeoutMs: options.uploadResponseTimeoutMs ?? 300_000,
      dispatcher: options.dispatcher,
      onResponse: options.onResponse,
    });
    this.#uploadIdleTimeoutMs = options.uploadIdleTimeoutMs ?? declaredDefault('UPLOAD_IDLE_TIMEOUT');
    this.#uploadAnswerGraceMs = options.uploadAnswerGraceMs ?? 1_000;
  }

  /**
   * With `opts.fence`, the body's last byte waits for it, on every send (a
   * resend after a 401 asks again): refused, the request ends short of its
   * length and cannot create a job.
   */
  createJob(body: CreateImportJobBody, opts: FencedCallOptions = {}): Promise<CreatedJob> {
    return this.#transport.short({
      endpoint: 'createJob',
      path: endpointPath('createJob'),
      json: body,
      shape: shapes.createdJob,
      signal: opts.signal,
      ...(opts.fence ? { fence: opts.fence } : {}),
    });
  }

  /**
   * Streams `body` as the job's data file, with backpressure. The only time
   * limits are idle ones: no byte moved for uploadIdleTimeoutMs while sending,
   * no answer for uploadResponseTimeoutMs after the last byte. The caller owns
   * `body`: on failure it is no longer read, and the caller destroys it.
   * The body holds back after its first byte for an early refusal (upload-body.ts).
   */
  submitData(
    jobId: string,
    body: Readable | AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    opts: SubmitDataOptions,
  ): Promise<ImportJob> {
    int64Id('jobId', jobId);
    const contentLength = opts.contentLength;
    if (!Number.isSafeInteger(contentLength) || contentLength < 0) {
      throw new RangeError(`contentLength must be a whole number of bytes, got ${JSON.stringify(contentLength)}`);
    }
    const upload = new UploadBody(body, {
      contentLength,
      idleMs: this.#uploadIdleTimeoutMs,
      graceCeilingMs: this.#uploadAnswerGraceMs,
      lastAnswerMs: this.#transport.lastAnswerMs,
      onProgress: opts.onProgress,
      onBodySent: opts.onBodySent,
    });
    return this.#transport.upload(
      {
        endpoint: 'submitData',
        path: endpointPath('submitData', { id: jobId }),
        query: { listAction: opts.listAction },
        shape: shapes.importJob,
        signal: opts.signal,
      },
      upload,
    );
  }

  getJob(jobId: string, opts: CallOptions = {}): Promise<ImportJob> {
    int64Id('jobId', jobId);
    return this.#transport.short({
      endpoint: 'jobStatus',
      path: endpointPath('jobStatus', { id: jobId }),
      shape: shapes.importJob,
      signal: opts.signal,
    });
  }

  listJobs(query: ListJobsQuery = {}, opts: CallOptions = {}): Promise<ImportJobList> {
    return this.#transport.short({
      endpoint: 'listJobs',
      path: endpointPath('listJobs'),
      query: { ...query },
      shape: shapes.importJobList,
      signal: opts.signal,
    });
  }

  listSources(entityType: EntityType, opts: CallOptions = {}): Promise<string[]> {
    return this.#transport.short({
      endpoint: 'listSources',
      path: endpointPath('listSources', { entityType }),
      shape: shapes.sources,
      signal: opts.signal,
    });
  }

  listActivityTypes(opts: CallOptions = {}): Promise<ActivityType[]> {
    return this.#transport.short({
      endpoint: 'activityTypes',
      path: endpointPath('activityTypes'),
      shape: shapes.activityTypes,
      signal: opts.signal,
    });
  }

  getActivityFields(activityTypeId: number, opts: CallOptions = {}): Promise<ActivityFields> {
    positiveInt('activityTypeId', activityTypeId);
    return this.#transport.short({
      endpoint: 'activityFields',
      path: endpointPath('activityFields', { activityTypeId }),
      shape: shapes.activityFields,
      signal: opts.signal,
    });
  }

  /** One custom source, for its name: a job on it names it in `source`. */
  getCustomSource(sourceId: string, opts: CallOptions = {}): Promise<CustomSource> {
    int64Id('sourceId', sourceId);
    return this.#transport.short({
      endpoint: 'getCustomSource',
      path: endpointPath('getCustomSource', { source_id: sourceId }),
      shape: shapes.customSource,
      signal: opts.signal,
    });
  }

  getFieldMappings(sourceId: string, objectType: MappingObjectType, opts: CallOptions = {}): Promise<FieldMapping[]> {
    return this.#transport.short({
      endpoint: 'getFieldMappings',
      path: endpointPath('getFieldMappings', mappingParams(sourceId, objectType)),
      shape: shapes.fieldMappings,
      signal: opts.signal,
    });
  }

  /** Replaces the whole set for the source and object type (the service answers 201, no body). */
  async putFieldMappings(
    sourceId: string,
    objectType: MappingObjectType,
    mappings: FieldMapping[],
    opts: CallOptions = {},
  ): Promise<void> {
    await this.#transport.short({
      endpoint: 'putFieldMappings',
      path: endpointPath('putFieldMappings', mappingParams(sourceId, objectType)),
      json: { fieldMappings: mappings },
      signal: opts.signal,
    });
  }

  /** Closes the connections this client opened; a dispatcher passed in stays its owner's. */
  close(): Promise<void> {
    return this.#transport.close();
  }
}
