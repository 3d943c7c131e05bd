/** The simulator's inspection records (re-exported by server.ts). */
import type { ServiceEndpoint } from '../../workflows/contracts/endpoints.js';

export type JobState = 'new' | 'processing' | 'completed' | 'failed';

export interface RequestRecord {
  method: string;
  /** The path without the query string. */
  path: string;
  /** The query string without `?`, when there was one (e.g. `listAction=noop`). */
  query?: string;
  endpoint: ServiceEndpoint | 'unknown';
  /** The answer's status; 0 while unanswered and for a socket the simulator destroyed without answering. */
  status: number;
  at: string;
  /** A POST or PUT, once it closed: whether the service read its whole body (all Content-Length bytes). */
  bodyComplete?: boolean;
  /** A data PUT, once read: the body bytes the service took in, and the Content-Length the client declared. */
  body?: { bytes: number; declared?: number };
}

export interface JobRecord {
  /** The int64 id as a decimal string (the bigIds fault makes ids above 2^53). */
  id: string;
  dataImportName: string;
  entityType: string;
  source: string;
  activityTypeId?: number;
  state: JobState;
  createdAt: string;
  updatedAt: string;
  /** The listAction query sent with the accepted upload; absent when none was sent (the service then applies `replace`). */
  listAction?: string;
  bytesReceived: number;
  sha256?: string;
  header?: string[];
  /**
   * The header as the job read it: each label its custom source maps becomes
   * that mapping's serviceFieldName, the others stay display names.
   */
  readAs?: string[];
  failureReason?: string;
  /** Accepted uploads: more than 1 would mean the service took the same job's data twice. */
  uploads: number;
  /** Every complete body the job accepted, in order (a lenient service may accept more than one). */
  acceptedBodies: AcceptedBody[];
  /** Set by the listCreatedLate fault: lists show the job from this instant on. */
  listedFrom?: string;
}

export interface AcceptedBody {
  bytes: number;
  sha256: string;
  at: string;
}

/**
 * The simulator's own account of what it committed, for a soak's checks:
 * per job the complete bodies it accepted, and per object the jobs made for
 * it, keyed by the `[import:<key>]` name prefix and by content hash.
 */
export interface ServiceRecord {
  /** Job id -> complete bodies accepted. */
  bodiesByJob: Record<string, AcceptedBody[]>;
  /** `[import:<key>]` name key -> ids of the jobs created with it (jobs without a key are under `''`). */
  jobsByNameKey: Record<string, string[]>;
  /** sha256 of an accepted body -> ids of the jobs that accepted it. */
  jobsByContent: Record<string, string[]>;
  /** Calls the service refused for a spent daily limit (429-101), per endpoint. */
  dailyLimitRefusals: Record<string, number>;
}

/** A tenant's custom source: a named data origin whose field mappings a job on it reads. */
export interface CustomSource {
  /** The int64 id, as a decimal string. */
  id: string;
  /** What `GET /import/v1/{entityType}/sources` lists and a job's `source` names. */
  name: string;
  description?: string;
  priority?: number;
}
