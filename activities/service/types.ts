/**
 * The shapes the Company Data Service answers with (spec "Resources" and the
 * service facts), as the client returns them. Extra fields the service may
 * add are kept, not rejected.
 */
import type { EntityType, ListAction } from '../../workflows/contracts/import-input.js';

/** `new`, `processing`, `completed` or `failed`; kept open so that a new state is reported, not rejected. */
export type ImportJobState = 'new' | 'processing' | 'completed' | 'failed' | (string & {});

/** The service marks no field required; the client insists on `id` and, where it acts on it, `state`. */
export interface ImportJob {
  /** int64, as a decimal string: exact above 2^53. */
  id: string;
  state: ImportJobState;
  dataImportName?: string;
  entityType?: string;
  createdAt?: string;
  updatedAt?: string;
  source?: string;
  activityTypeId?: number;
}

/** A create's answer: its state may be missing (read the job again then). */
export type CreatedJob = Omit<ImportJob, 'state'> & { state?: ImportJobState };

/** A job as the list shows it: its state may be missing too. */
export type ListedJob = Omit<ImportJob, 'state'> & { state?: ImportJobState };

export interface CreateImportJobBody {
  dataImportName: string;
  entityType: EntityType;
  /** The service's default is `CSV`. */
  source?: string;
  /** Required when entityType is `Activity`. */
  activityTypeId?: number;
}

export interface ListJobsQuery {
  entityType?: EntityType;
  state?: ImportJobState;
  /** The format of `sort` is unpublished: nothing sends it. */
  page?: number;
  perPage?: number;
}

/** The jobs of one list page; entries without a usable id are left out. */
export interface ImportJobList {
  data: ListedJob[];
  /** The service's count of matching jobs, when it sends one: optional and unreliable, a hint only. */
  totalCount?: number;
}

/** A custom source: a named data origin; its name is what a job's `source` names. */
export interface CustomSource {
  /** int64, as a decimal string. */
  id: string;
  name: string;
}

export interface ActivityType {
  id: number;
  name: string;
  description?: string;
  activitySource?: string;
}

interface ActivityField {
  fieldName: string;
  fieldDataType: string;
  defaultField?: boolean;
  isRequiredForCsvImport?: boolean;
}

export interface ActivityFields {
  activityType: { name: string; label?: string; description?: string };
  fields: ActivityField[];
}

export interface CallOptions {
  /** Aborting rejects the call with the signal's reason, never with a service error. */
  signal?: AbortSignal;
}

export interface FencedCallOptions extends CallOptions {
  /** The last byte of the body waits for this to answer true; false ends the request short of its length. */
  fence?: () => Promise<boolean>;
}

export interface SubmitDataOptions extends CallOptions {
  /** Exact byte count of the body: sent as Content-Length. */
  contentLength: number;
  listAction?: ListAction;
  /** Called as bytes are handed to the socket, with the running total (for heartbeats). */
  onProgress?: (bytesSent: number) => void;
  /** Called once every byte is written to the socket; from then on only the answer is awaited. */
  onBodySent?: () => void;
}

/** What the client reports after every call (for metrics); never carries a header or the token. */
export interface ResponseEvent {
  endpoint: string;
  method: string;
  status?: number;
  durationMs: number;
  errorType?: string;
}
