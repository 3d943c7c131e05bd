/**
 * Injected faults. Each one applies to the next `count` matching requests
 * (default 1) and is used up as it applies:
 * - failNext: answer with that status instead of handling the request
 *   (nothing is applied, nothing is counted against the daily limit); with
 *   `echoToken` the body quotes the request's bearer token in that encoding;
 * - delayNext: handle the request, then wait before answering (a slow
 *   service whose work is done when the client may already have timed out);
 * - applyThenDrop: handle the request fully, then destroy the socket unanswered;
 * - resetUploadAfter: destroy the socket after K body bytes of a data PUT
 *   (the upload is not accepted, the job stays new);
 * - stallUploadAfter: stop reading a data PUT's body after K bytes, so the
 *   client's writes block (backpressure) until the simulator closes;
 * - holdUploadAfter: the same until releaseHeldUploads(), then read on as
 *   usual (a slow service; the client's body goes on where it stopped);
 * - commitUploadOnAnswer: read a data PUT's whole body, answer only after a
 *   delay, and take the data only if the client is still there to hear the
 *   answer (a service that commits when it answers; delayNext is the variant
 *   that commits on receipt and answers late);
 * - commitUploadLate: read a data PUT's whole body, keep the job `new` for a
 *   while, then take the data whether or not the client is still there, and
 *   answer if it is (a service that commits within its lag);
 * - answerUploadEarly: after K body bytes, take what arrived as the file,
 *   answer 200 and hang up (a lingering close: the rest is read and dropped);
 * - refuseUploadOnHeaders: answer a data PUT from its headers alone (401,
 *   403, 404, 413, 429...), never use its body, and hang up the same way;
 *   with a delayNext for submitData, only after that delay (slow checks);
 * - refuseUploadMidBody: after K body bytes of a data PUT, answer an error
 *   status (401 by default), and reset the connection (a TCP RST) once its
 *   head and half its body are out, as a proxy or a service that gives up on
 *   a request may: the status arrives, the rest of the answer never does;
 * - spellStates: show job states in other spellings (`New`, `COMPLETED`) or
 *   as states the spec does not name (`queued`) in job answers.
 * - expireTokenNext: the request's token expires early, before it is checked.
 * The job endpoints' faults (late commits, lists that ignore sort or cap the
 * page size, shortened names, big ids, missing fields) are in job-faults.ts.
 */
import type { ServiceEndpoint } from '../../workflows/contracts/endpoints.js';
import { TOKEN_ECHOES, type TokenEcho } from './auth.js';
import { JobFaults } from './job-faults.js';
import type { JobState } from './types.js';

/** How job answers spell each state; a state not named keeps its own spelling. */
export type StateSpelling = Partial<Record<JobState, string>>;

export interface FailFault {
  status: number;
  body?: unknown;
  contentType?: string;
  echoToken?: TokenEcho;
  /** Extra response headers, e.g. `{ 'retry-after': '120' }`. */
  headers?: Record<string, string>;
}

interface Counted<T> {
  value: T;
  remaining: number;
}

export class FaultQueue<T> {
  private readonly items: Counted<T>[] = [];

  add(value: T, count = 1): void {
    if (!Number.isInteger(count) || count < 1) {
      throw new Error(`fault count must be a positive integer, got ${JSON.stringify(count)}`);
    }
    this.items.push({ value, remaining: count });
  }

  take(): T | undefined {
    const head = this.items[0];
    if (!head) return undefined;
    head.remaining -= 1;
    if (head.remaining === 0) this.items.shift();
    return head.value;
  }

  clear(): void {
    this.items.length = 0;
  }
}

export class FaultPlan {
  private readonly fail = new Map<ServiceEndpoint, FaultQueue<FailFault>>();
  private readonly delay = new Map<ServiceEndpoint, FaultQueue<number>>();
  private readonly drop = new Map<ServiceEndpoint, FaultQueue<true>>();
  private readonly resetUpload = new FaultQueue<number>();
  private readonly stallUpload = new FaultQueue<number>();
  private readonly holdUpload = new FaultQueue<number>();
  private held = openGate();
  private readonly expireToken = new Map<ServiceEndpoint, FaultQueue<true>>();
  private readonly commitOnAnswer = new FaultQueue<number>();
  private readonly commitLate = new FaultQueue<number>();
  private readonly earlyAnswer = new FaultQueue<number>();
  private readonly headerRefusal = new FaultQueue<FailFault>();
  private readonly midBodyRefusal = new FaultQueue<{ afterBytes: number; status: number }>();
  private readonly spelling = new FaultQueue<StateSpelling>();
  readonly jobs = new JobFaults();

  failNext(endpoint: ServiceEndpoint, fault: FailFault, count?: number): void {
    if (!Number.isInteger(fault.status) || fault.status < 100 || fault.status > 599) {
      throw new Error(`failNext status must be an HTTP status code (100-599), got ${JSON.stringify(fault.status)}`);
    }
    if (fault.echoToken !== undefined && !TOKEN_ECHOES.includes(fault.echoToken)) {
      throw new Error(`echoToken must be one of ${TOKEN_ECHOES.join(', ')}, got ${JSON.stringify(fault.echoToken)}`);
    }
    queueFor(this.fail, endpoint).add(fault, count);
  }

  delayNext(endpoint: ServiceEndpoint, ms: number, count?: number): void {
    requireNonNegative('delayNext ms', ms);
    queueFor(this.delay, endpoint).add(ms, count);
  }

  applyThenDrop(endpoint: ServiceEndpoint, count?: number): void {
    queueFor(this.drop, endpoint).add(true, count);
  }

  resetUploadAfter(bytes: number, count?: number): void {
    requireNonNegative('resetUploadAfter bytes', bytes);
    this.resetUpload.add(bytes, count);
  }

  stallUploadAfter(bytes: number, count?: number): void {
    requireNonNegative('stallUploadAfter bytes', bytes);
    this.stallUpload.add(bytes, count);
  }

  holdUploadAfter(bytes: number, count?: number): void {
    requireNonNegative('holdUploadAfter bytes', bytes);
    this.holdUpload.add(bytes, count);
  }

  /** Every upload held so far reads on; later holds wait for the next release. */
  releaseHeldUploads(): void {
    this.held.open();
    this.held = openGate();
  }

  /** The next hold, if one is queued: after how many bytes, and until when. */
  takeUploadHold(): { afterBytes: number; until: Promise<void> } | undefined {
    const afterBytes = this.holdUpload.take();
    return afterBytes === undefined ? undefined : { afterBytes, until: this.held.opened };
  }

  expireTokenNext(endpoint: ServiceEndpoint, count?: number): void {
    queueFor(this.expireToken, endpoint).add(true, count);
  }

  takeExpireToken(endpoint: ServiceEndpoint): boolean {
    return this.expireToken.get(endpoint)?.take() ?? false;
  }

  commitUploadOnAnswer(delayMs: number, count?: number): void {
    requireNonNegative('commitUploadOnAnswer delayMs', delayMs);
    this.commitOnAnswer.add(delayMs, count);
  }

  commitUploadLate(delayMs: number, count?: number): void {
    requireNonNegative('commitUploadLate delayMs', delayMs);
    this.commitLate.add(delayMs, count);
  }

  takeCommitLate(): number | undefined {
    return this.commitLate.take();
  }

  answerUploadEarly(bytes: number, count?: number): void {
    requireNonNegative('answerUploadEarly bytes', bytes);
    this.earlyAnswer.add(bytes, count);
  }

  refuseUploadOnHeaders(fault: FailFault, count?: number): void {
    if (!Number.isInteger(fault.status) || fault.status < 400 || fault.status > 599) {
      throw new Error(
        `refuseUploadOnHeaders status must be an HTTP error status (400-599), got ${JSON.stringify(fault.status)}`,
      );
    }
    this.headerRefusal.add(fault, count);
  }

  refuseUploadMidBody(fault: { afterBytes: number; status: number }, count?: number): void {
    requireNonNegative('refuseUploadMidBody afterBytes', fault.afterBytes);
    if (!Number.isInteger(fault.status) || fault.status < 400 || fault.status > 599) {
      throw new Error(
        `refuseUploadMidBody status must be an HTTP error status (400-599), got ${JSON.stringify(fault.status)}`,
      );
    }
    this.midBodyRefusal.add(fault, count);
  }

  spellStates(spelling: StateSpelling, count?: number): void {
    for (const [state, spelled] of Object.entries(spelling)) {
      if (!['new', 'processing', 'completed', 'failed'].includes(state) || typeof spelled !== 'string' || !spelled) {
        throw new Error(
          `spellStates maps new, processing, completed or failed to a non-empty string, got ${JSON.stringify(state)}: ${JSON.stringify(spelled)}`,
        );
      }
    }
    this.spelling.add({ ...spelling }, count);
  }

  takeFail(endpoint: ServiceEndpoint): FailFault | undefined {
    return this.fail.get(endpoint)?.take();
  }

  takeDelay(endpoint: ServiceEndpoint): number | undefined {
    return this.delay.get(endpoint)?.take();
  }

  takeDrop(endpoint: ServiceEndpoint): boolean {
    return this.drop.get(endpoint)?.take() ?? false;
  }

  takeUploadReset(): number | undefined {
    return this.resetUpload.take();
  }

  takeUploadStall(): number | undefined {
    return this.stallUpload.take();
  }

  takeCommitOnAnswer(): number | undefined {
    return this.commitOnAnswer.take();
  }

  takeEarlyAnswer(): number | undefined {
    return this.earlyAnswer.take();
  }

  takeHeaderRefusal(): FailFault | undefined {
    return this.headerRefusal.take();
  }

  takeMidBodyRefusal(): { afterBytes: number; status: number } | undefined {
    return this.midBodyRefusal.take();
  }

  takeSpelling(): StateSpelling | undefined {
    return this.spelling.take();
  }

  clear(): void {
    this.commitOnAnswer.clear();
    this.commitLate.clear();
    this.earlyAnswer.clear();
    this.headerRefusal.clear();
    this.midBodyRefusal.clear();
    this.spelling.clear();
    this.fail.clear();
    this.delay.clear();
    this.drop.clear();
    this.resetUpload.clear();
    this.stallUpload.clear();
    this.holdUpload.clear();
    this.releaseHeldUploads();
    this.expireToken.clear();
    this.jobs.clear();
  }
}

/** A promise and the function that settles it (Promise.withResolvers needs Node 22). */
function openGate(): { opened: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

function queueFor<T>(map: Map<ServiceEndpoint, FaultQueue<T>>, endpoint: ServiceEndpoint): FaultQueue<T> {
  let queue = map.get(endpoint);
  if (!queue) {
    queue = new FaultQueue<T>();
    map.set(endpoint, queue);
  }
  return queue;
}

function requireNonNegative(what: string, value: number): void {
  if (!Number.isFinite(value) || value < 0) {
    throw new Error(`${what} must be a non-negative number, got ${JSON.stringify(value)}`);
  }
}
