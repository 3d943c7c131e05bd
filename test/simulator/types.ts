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
  failureReason?: string;
  /** Accepted uploads: more than 1 would mean the service took the same job's data twice. */
  uploads: number;
  /** Set by the listCreatedLate fault: lists show the job from this instant on. */
  listedFrom?: string;
}
