/** What a service route handler gets: the request, its path parameters and the simulator's state. */
import type { IncomingMessage } from 'node:http';
import type { TokenAuthority } from './auth.js';
import type { ChaosDraw } from './chaos.js';
import type { FaultPlan } from './faults.js';
import type { JobStore } from './job-store.js';

export interface RouteContext {
  req: IncomingMessage;
  url: URL;
  params: string[];
  store: JobStore;
  faults: FaultPlan;
  auth: TokenAuthority;
  maxUploadBytes: number;
  /** The chaos faults drawn for this request (empty without chaos). */
  chaos: ChaosDraw;
  /** Accept every complete data PUT that began while the job was new, as a real service may. */
  lenientUploads: boolean;
  /** Aborted when the simulator closes: wakes injected delays. */
  closed: AbortSignal;
  /** Notes in the request log how much of a data PUT's body the service read. */
  noteBody(bytes: number, declared: number | undefined): void;
}
