/**
 * A Company Data Service simulator: a node:http server that behaves like the
 * production service on every import and field-mapping endpoint (spec +
 * service-facts.md), with daily limits, fault injection and inspection. Used
 * by the tests, the upload benchmark (in another process) and the local demo.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { REQUIRED_FIELDS, type RequiredFields } from '../../activities/csv/required-labels.js';
import type { BudgetedEndpoint, ServiceEndpoint } from '../../workflows/contracts/endpoints.js';
import {
  type ClientTable,
  IMPORT_PERMISSION,
  TOKEN_LIFETIME_SECONDS,
  TokenAuthority,
  type TokenEcho,
  type TokenTable,
  tokenEchoReply,
} from './auth.js';
import { Chaos, type ChaosCounts, type ChaosDraw, type ChaosOptions } from './chaos.js';
import { defaultFaultReply, importError, specError } from './error-bodies.js';
import { type FailFault, FaultPlan, type StateSpelling } from './faults.js';
import { drain, json, type Reply, send } from './http-io.js';
import { handleInspect, INSPECT_PREFIX } from './inspect.js';
import type { JobFaults } from './job-faults.js';
import { JobStore } from './job-store.js';
import { DailyLimits } from './limits.js';
import type { RouteContext } from './route-context.js';
import { getCustomSource, listCustomSources } from './routes-custom-sources.js';
import { IMPORT_ROUTES } from './routes-import.js';
import { getFieldMappings, putFieldMappings } from './routes-mappings.js';
import { matchRoute } from './routing.js';
import type { CustomSource, JobRecord, JobState, RequestRecord, ServiceRecord } from './types.js';

export type { ChaosOptions } from './chaos.js';
export type { AcceptedBody, CustomSource, JobRecord, JobState, RequestRecord, ServiceRecord } from './types.js';

/** The tenant's custom sources unless a test names others. */
export const DEFAULT_CUSTOM_SOURCES: readonly CustomSource[] = [
  { id: '1001', name: 'Salesforce CRM', description: 'Accounts and contacts from Salesforce', priority: 50 },
  { id: '1002', name: 'HubSpot CRM', description: 'Companies and contacts from HubSpot', priority: 40 },
];

export const DEMO_TOKENS = {
  importer: 'sim-token-import-data',
  noPermission: 'sim-token-no-permissions',
  expired: 'sim-token-expired',
} as const;

/** The client the demo and tests exchange credentials as (POST /auth/v1/token). */
export const DEMO_CLIENT = { id: 'sim-client', secret: 'sim-client-secret/5e+cr=t' } as const;

const DEFAULT_CLIENTS: ClientTable = {
  [DEMO_CLIENT.id]: { secret: DEMO_CLIENT.secret, permissions: [IMPORT_PERMISSION] },
};

export const DEFAULT_TOKENS: TokenTable = {
  [DEMO_TOKENS.importer]: { permissions: [IMPORT_PERMISSION] },
  [DEMO_TOKENS.noPermission]: { permissions: [] },
  [DEMO_TOKENS.expired]: { permissions: [IMPORT_PERMISSION], expired: true },
};

export interface SimulatorOptions {
  host?: string;
  port?: number;
  tokens?: TokenTable;
  /** Clients the token exchange knows. */
  clients?: ClientTable;
  /** Lifetime of exchanged tokens; default 8 hours as in production. */
  tokenLifetimeSeconds?: number;
  /** Exchanges answer without `expiresIn`; their tokens still expire after tokenLifetimeSeconds. */
  omitExpiresIn?: boolean;
  dailyLimits?: Partial<Record<BudgetedEndpoint, number>>;
  /** Daily counter reset, minutes after midnight UTC. */
  resetMinuteUtc?: number;
  now?: () => number;
  /** Time from an accepted upload to completed/failed. */
  processingMs?: number;
  maxUploadBytes?: number;
  /** The tenant's custom sources (id and name); default DEFAULT_CUSTOM_SOURCES. */
  customSources?: readonly CustomSource[];
  /** The fields each entity type's job needs; default the worker's table (REQUIRED_FIELDS, its service names inferred). */
  requiredFields?: RequiredFields;
  /**
   * Accept every complete data PUT that began while the job was `new`, even
   * when another body completed first (a real service may; by default the
   * simulator refuses the second one).
   */
  lenientUploads?: boolean;
  /** Random faults drawn from a seeded RNG (chaos.ts); off by default. */
  chaos?: ChaosOptions;
  /** Completed jobs the tenant's history holds at the start (created before today's window). */
  completedHistory?: number;
}

export interface Simulator {
  readonly baseUrl: string;
  close(): Promise<void>;
  failNext(
    endpoint: ServiceEndpoint,
    status: number,
    options?: {
      count?: number;
      body?: unknown;
      contentType?: string;
      echoToken?: TokenEcho;
      headers?: Record<string, string>;
    },
  ): void;
  delayNext(endpoint: ServiceEndpoint, ms: number, options?: { count?: number }): void;
  resetUploadAfter(bytes: number, options?: { count?: number }): void;
  applyThenDrop(endpoint: ServiceEndpoint, options?: { count?: number }): void;
  stallUploadAfter(bytes: number, options?: { count?: number }): void;
  /** The next data PUT(s) stop being read after `bytes` until releaseHeldUploads(), then read on. */
  holdUploadAfter(bytes: number, options?: { count?: number }): void;
  releaseHeldUploads(): void;
  /**
   * Calls `listener` as each request arrives (its headers read, nothing of its
   * body), in the same turn: a test can act on a client at that very moment.
   * Returns the function that removes it.
   */
  onRequest(listener: (request: RequestRecord) => void): () => void;
  /** The next request(s) to `endpoint` find their token expired early (and it stays expired). */
  expireTokenNext(endpoint: ServiceEndpoint, options?: { count?: number }): void;
  commitUploadOnAnswer(delayMs: number, options?: { count?: number }): void;
  /** The next data PUT(s): the whole body read, the job stays `new` for delayMs, then takes it (client there or not). */
  commitUploadLate(delayMs: number, options?: { count?: number }): void;
  answerUploadEarly(bytes: number, options?: { count?: number }): void;
  refuseUploadOnHeaders(status: number, options?: { count?: number; body?: unknown; contentType?: string }): void;
  /** After `afterBytes` body bytes of a data PUT: answer `status` (default 401), then reset the connection. */
  refuseUploadMidBody(afterBytes: number, options?: { count?: number; status?: number }): void;
  /** Applies to the next `count` answers that show a job (create, status, upload). */
  spellStates(spelling: StateSpelling, options?: { count?: number }): void;
  /** Clears every queued fault; jobs a holdProcessing fault kept `processing` go on to their end. */
  clearFaults(): void;
  /** Tokens the exchange issued, oldest first. */
  issuedTokens(): string[];
  setJobOutcome(outcome: 'completed' | 'failed'): void;
  /** Changes the processing time of uploads accepted from now on. */
  setProcessingMs(ms: number): void;
  /** Adds `count` completed jobs to the history (see SimulatorOptions.completedHistory). */
  addCompletedHistory(count: number): void;
  requests(): RequestRecord[];
  jobs(): JobRecord[];
  /** A job by its id (the service's int64, as a number or a decimal string). */
  job(id: number | string): JobRecord | undefined;
  /** The job endpoints' faults: late commits, lists that ignore sort or cap pages, short names, big ids, missing fields. */
  readonly jobFaults: JobFaults;
  /** Creates answered with a failure whose job has not appeared yet (commitCreateLate). */
  lateCreatesPending(): number;
  counters(): Record<BudgetedEndpoint, number>;
  fieldMappings(sourceId: string, objectType: string): unknown[] | undefined;
  seedFieldMappings(sourceId: string, objectType: string, mappings: unknown[]): void;
  resetCounters(): void;
  /** Turns the random faults on with these options (a fresh RNG from their seed), or off. */
  setChaos(options: ChaosOptions | undefined): void;
  /** How often each random fault struck, since the last setChaos. */
  chaosCounts(): ChaosCounts | undefined;
  setLenientUploads(lenient: boolean): void;
  /** What the service committed: bodies per job, jobs per name key and per content, daily-limit refusals. */
  record(): ServiceRecord;
  /** Accepts this token from now on (a rotated token a sidecar wrote for the workers). */
  addToken(token: string): void;
  /** This token answers 401 from now on. */
  expireToken(token: string): void;
}

const ROUTES: Record<ServiceEndpoint, (ctx: RouteContext) => Promise<Reply>> = {
  ...IMPORT_ROUTES,
  getCustomSource,
  listCustomSources,
  getFieldMappings,
  putFieldMappings,
  tokenExchange: (ctx) => ctx.auth.exchange(ctx.req),
};

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const host = options.host ?? '127.0.0.1';
  const now = options.now ?? Date.now;
  const resetMinuteUtc = options.resetMinuteUtc ?? 0;
  if (!Number.isInteger(resetMinuteUtc) || resetMinuteUtc < 0 || resetMinuteUtc >= 24 * 60) {
    throw new Error(`resetMinuteUtc must be an integer from 0 to 1439, got ${JSON.stringify(resetMinuteUtc)}`);
  }
  const auth = new TokenAuthority(
    options.tokens ?? DEFAULT_TOKENS,
    options.clients ?? DEFAULT_CLIENTS,
    options.tokenLifetimeSeconds ?? TOKEN_LIFETIME_SECONDS,
    now,
    options.omitExpiresIn,
  );
  // The spec's limit: 5 GB, in decimal bytes.
  const maxUploadBytes = options.maxUploadBytes ?? 5_000_000_000;
  const store = new JobStore(
    now,
    options.processingMs ?? 200,
    options.customSources ?? DEFAULT_CUSTOM_SOURCES,
    options.requiredFields ?? REQUIRED_FIELDS,
  );
  store.prefillCompleted(options.completedHistory ?? 0);
  const limits = new DailyLimits(options.dailyLimits ?? {}, resetMinuteUtc, now);
  const faults = new FaultPlan();
  let chaos = options.chaos ? new Chaos(options.chaos) : undefined;
  let lenientUploads = options.lenientUploads ?? false;
  const log: RequestRecord[] = [];
  const requestListeners = new Set<(request: RequestRecord) => void>();
  // Wakes injected delays when the simulator closes, so no timer outlives it.
  const closed = new AbortController();

  async function serveService(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const match = matchRoute(req.method ?? '', url.pathname);
    const record: RequestRecord = {
      method: req.method ?? '',
      path: url.pathname,
      ...(url.search ? { query: url.search.slice(1) } : {}),
      endpoint: match?.endpoint ?? 'unknown',
      status: 0,
      at: new Date(now()).toISOString(),
    };
    log.push(record);
    if (req.method === 'POST' || req.method === 'PUT') {
      req.once('close', () => {
        record.bodyComplete = req.complete;
      });
    }
    for (const listener of [...requestListeners]) listener(structuredClone(record));
    if (!match) {
      await drain(req);
      const reply = importError(404, `No endpoint ${req.method} ${url.pathname}`);
      send(res, reply);
      record.status = reply.status;
      return;
    }

    const { endpoint } = match;
    const draw = chaos?.draw(endpoint, contentLengthOf(req)) ?? {};
    const refusedOnHeaders = endpoint === 'submitData' ? faults.takeHeaderRefusal() : undefined;
    const delayMs = faults.takeDelay(endpoint) ?? draw.answerDelayMs;
    if (refusedOnHeaders) {
      // A delayed refusal is a slow service's: its checks take that long before it answers.
      if (delayMs !== undefined) await sleep(delayMs, undefined, { signal: closed.signal }).catch(() => undefined);
      const reply = faultReply(endpoint, refusedOnHeaders);
      send(res, { ...reply, closeUnread: true });
      record.status = reply.status;
      return;
    }
    const injected = faults.takeFail(endpoint) ?? chaosFailure(draw);
    let reply: Reply;
    let drop = false;
    if (injected?.echoToken) {
      reply = tokenEchoReply(injected.status, req.headers.authorization, injected.echoToken);
    } else if (injected) {
      reply = { ...faultReply(endpoint, injected), headers: injected.headers };
    } else {
      if (faults.takeExpireToken(endpoint)) auth.expire(req.headers.authorization);
      const refusal = auth.authorize(req.headers.authorization, endpoint) ?? limits.take(endpoint);
      if (refusal) reply = refusal;
      else {
        reply = await ROUTES[endpoint]({
          req,
          url,
          params: match.params,
          store,
          faults,
          auth,
          maxUploadBytes,
          chaos: draw,
          lenientUploads,
          closed: closed.signal,
          noteBody: (bytes, declared) => {
            record.body = declared === undefined ? { bytes } : { bytes, declared };
          },
        });
        drop = !reply.unanswered && (faults.takeDrop(endpoint) || (draw.loseAnswer === true && reply.status < 300));
      }
    }
    if (reply.unanswered) {
      record.status = reply.status;
      return;
    }
    reply = respelled(endpoint, reply, faults);
    // Read what is left of the body before answering: an answer sent over unread
    // request bytes can be lost to the TCP reset that closing such a socket causes.
    if (!reply.closeUnread) await drain(req);
    if (delayMs !== undefined) await sleep(delayMs, undefined, { signal: closed.signal }).catch(() => undefined);
    if (drop || req.socket.destroyed) {
      req.socket.destroy();
      return;
    }
    send(res, reply);
    record.status = reply.status;
  }

  const server = createServer({ requestTimeout: 0, headersTimeout: 60_000, keepAlive: true }, (req, res) => {
    const url = new URL(req.url ?? '/', 'http://simulator');
    const work = url.pathname.startsWith(INSPECT_PREFIX)
      ? handleInspect(req, url.pathname, simulator).then(async (reply) => {
          await drain(req);
          send(res, reply);
        })
      : serveService(req, res, url);
    work.catch((error: unknown) => {
      if (res.headersSent || req.socket.destroyed) {
        req.socket.destroy();
        return;
      }
      send(res, json(500, { message: `simulator error: ${(error as Error).message}` }));
    });
  });
  // Multi-GB uploads take minutes: no whole-request limit (ENVIRONMENT.md).
  // Idle sockets live longer here than in any client (the service client's 10 s),
  // as behind production's front ends (60 s and more): the client always closes
  // first. With a shorter server side, a client stalled past the server's timeout
  // could send on a socket the server was closing and read ECONNRESET, a create
  // the test itself sent failing on a loaded machine.
  server.keepAliveTimeout = 65_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;

  const simulator: Simulator = {
    baseUrl: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        store.stop();
        closed.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
    failNext: (endpoint, status, opts = {}) =>
      faults.failNext(
        endpoint,
        { status, body: opts.body, contentType: opts.contentType, echoToken: opts.echoToken, headers: opts.headers },
        opts.count,
      ),
    delayNext: (endpoint, ms, opts = {}) => faults.delayNext(endpoint, ms, opts.count),
    resetUploadAfter: (bytes, opts = {}) => faults.resetUploadAfter(bytes, opts.count),
    applyThenDrop: (endpoint, opts = {}) => faults.applyThenDrop(endpoint, opts.count),
    stallUploadAfter: (bytes, opts = {}) => faults.stallUploadAfter(bytes, opts.count),
    holdUploadAfter: (bytes, opts = {}) => faults.holdUploadAfter(bytes, opts.count),
    releaseHeldUploads: () => faults.releaseHeldUploads(),
    onRequest: (listener) => {
      requestListeners.add(listener);
      return () => requestListeners.delete(listener);
    },
    expireTokenNext: (endpoint, opts = {}) => faults.expireTokenNext(endpoint, opts.count),
    commitUploadOnAnswer: (delayMs, opts = {}) => faults.commitUploadOnAnswer(delayMs, opts.count),
    commitUploadLate: (delayMs, opts = {}) => faults.commitUploadLate(delayMs, opts.count),
    answerUploadEarly: (bytes, opts = {}) => faults.answerUploadEarly(bytes, opts.count),
    refuseUploadMidBody: (afterBytes, opts = {}) =>
      faults.refuseUploadMidBody({ afterBytes, status: opts.status ?? 401 }, opts.count),
    refuseUploadOnHeaders: (status, opts = {}) =>
      faults.refuseUploadOnHeaders({ status, body: opts.body, contentType: opts.contentType }, opts.count),
    spellStates: (spelling, opts = {}) => faults.spellStates(spelling, opts.count),
    clearFaults: () => {
      faults.clear();
      store.releaseHeld();
    },
    issuedTokens: () => [...auth.issued],
    setJobOutcome: (outcome) => {
      store.jobOutcome = outcome;
    },
    setProcessingMs: (ms) => {
      store.processingMs = ms;
    },
    addCompletedHistory: (count) => store.prefillCompleted(count),
    requests: () => structuredClone(log),
    jobs: () => structuredClone(store.all()),
    jobFaults: faults.jobs,
    lateCreatesPending: () => store.lateCreatesPending(),
    job: (id) => {
      const job = store.get(String(id));
      return job && structuredClone(job);
    },
    counters: () => limits.counters(),
    fieldMappings: (sourceId, objectType) => {
      const mappings = store.fieldMappings(sourceId, objectType);
      return mappings && structuredClone(mappings);
    },
    seedFieldMappings: (sourceId, objectType, mappings) => store.setFieldMappings(sourceId, objectType, mappings),
    resetCounters: () => limits.reset(),
    setChaos: (chaosOptions) => {
      chaos = chaosOptions ? new Chaos(chaosOptions) : undefined;
    },
    chaosCounts: () => chaos && { ...chaos.counts },
    setLenientUploads: (lenient) => {
      lenientUploads = lenient;
    },
    record: () => ({ ...store.record(), dailyLimitRefusals: limits.refused() }),
    addToken: (token) => auth.add(token),
    expireToken: (token) => auth.expire(`Bearer ${token}`),
  };
  return simulator;
}

function contentLengthOf(req: IncomingMessage): number | undefined {
  const raw = req.headers['content-length'];
  return raw === undefined || !/^\d+$/.test(raw) ? undefined : Number(raw);
}

/** A chaos 5xx, or a 429 that is a short refusal (the spec's concurrency code), never the daily limit's 429-101. */
function chaosFailure(draw: ChaosDraw): FailFault | undefined {
  if (draw.failStatus === undefined) return undefined;
  if (draw.failStatus !== 429) return { status: draw.failStatus };
  const body = specError(429, '429-100', 'Too many concurrent requests').body;
  return { status: 429, body, headers: { 'retry-after': '1' } };
}

function faultReply(endpoint: ServiceEndpoint, fault: FailFault): Reply {
  return fault.body === undefined
    ? defaultFaultReply(endpoint, fault.status)
    : { status: fault.status, body: fault.body, contentType: fault.contentType };
}

const JOB_ANSWERS: readonly ServiceEndpoint[] = ['createJob', 'jobStatus', 'submitData'];

/** A job answer with its state in the spelling a spellStates fault asks for. */
function respelled(endpoint: ServiceEndpoint, reply: Reply, faults: FaultPlan): Reply {
  if (reply.status !== 200 || !JOB_ANSWERS.includes(endpoint)) return reply;
  const job = reply.body as { state?: JobState } | undefined;
  if (typeof job?.state !== 'string') return reply;
  const spelling = faults.takeSpelling();
  const spelled = spelling?.[job.state];
  return spelled === undefined ? reply : { ...reply, body: { ...job, state: spelled } };
}
