/**
 * The simulator's own HTTP API under /__sim/, for a simulator in another
 * process (the upload benchmark, the demo): read requests, jobs and counters,
 * inject and clear faults. No auth; never part of the service's paths.
 */
import type { IncomingMessage } from 'node:http';
import { isServiceEndpoint, type ServiceEndpoint } from '../../workflows/contracts/endpoints.js';
import type { TokenEcho } from './auth.js';
import type { ChaosOptions } from './chaos.js';
import type { StateSpelling } from './faults.js';
import { json, parseJson, type Reply, readSmallBody } from './http-io.js';
import type { Simulator } from './server.js';

export const INSPECT_PREFIX = '/__sim/';

const FAULT_KINDS = [
  'failNext',
  'delayNext',
  'resetUploadAfter',
  'applyThenDrop',
  'stallUploadAfter',
  'expireTokenNext',
  'commitUploadOnAnswer',
  'answerUploadEarly',
  'refuseUploadOnHeaders',
  'spellStates',
  'commitCreateLate',
  'listCreatedLate',
  'truncateNames',
  'bigIds',
  'ignoreSort',
  'capPerPage',
  'omitFields',
  'holdProcessing',
] as const;

export async function handleInspect(req: IncomingMessage, pathname: string, sim: Simulator): Promise<Reply> {
  const route = `${req.method} ${pathname.slice(INSPECT_PREFIX.length - 1)}`;
  if (route === 'GET /requests') return json(200, sim.requests());
  if (route === 'GET /jobs') return json(200, sim.jobs());
  if (route === 'GET /counters') return json(200, sim.counters());
  if (route === 'GET /record') return json(200, sim.record());
  if (route === 'POST /chaos') return withBody(req, (body) => setChaos(sim, body));
  const jobMatch = /^GET \/jobs\/(\d+)$/.exec(route);
  if (jobMatch) {
    const job = sim.job(jobMatch[1] as string);
    return job ? json(200, job) : json(404, { message: `no job ${jobMatch[1]}` });
  }
  if (route === 'POST /reset-faults') {
    sim.clearFaults();
    return { status: 204 };
  }
  if (route === 'POST /reset-counters') {
    sim.resetCounters();
    return { status: 204 };
  }
  const mappingMatch = /^(GET|PUT) \/field-mappings\/([^/]+)\/([^/]+)$/.exec(route);
  if (mappingMatch) {
    const [, method, sourceId, objectType] = mappingMatch as unknown as [string, string, string, string];
    if (method === 'PUT') return withJson(req, (body) => seedMappings(sim, sourceId, objectType, body));
    const mappings = sim.fieldMappings(sourceId, objectType);
    return mappings ? json(200, mappings) : json(404, { message: `no field mappings for ${sourceId}/${objectType}` });
  }
  if (route === 'POST /job-outcome') return withBody(req, (body) => setJobOutcome(sim, body));
  if (route === 'POST /faults') return withBody(req, (body) => addFault(sim, body));
  return json(404, {
    message: `unknown simulator path ${req.method} ${pathname}; expected GET /__sim/requests|jobs|jobs/{id}|counters|record, GET or PUT /__sim/field-mappings/{sourceId}/{objectType}, or POST /__sim/faults|reset-faults|reset-counters|job-outcome|chaos`,
  });
}

function withBody(req: IncomingMessage, apply: (body: Record<string, unknown>) => void): Promise<Reply> {
  return withJson(req, (body) => {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new Error('expected a JSON object body');
    apply(body as Record<string, unknown>);
  });
}

/** Reads a JSON body and applies it: 204 when applied, 400 with the one-line reason when not. */
async function withJson(req: IncomingMessage, apply: (body: unknown) => void): Promise<Reply> {
  const text = await readSmallBody(req, 8 * 1024 * 1024);
  const body = 'text' in text ? parseJson(text.text) : undefined;
  if (body === undefined) return json(400, { message: 'expected a JSON body' });
  try {
    apply(body);
  } catch (error) {
    return json(400, { message: (error as Error).message });
  }
  return { status: 204 };
}

function seedMappings(sim: Simulator, sourceId: string, objectType: string, body: unknown): void {
  if (!Array.isArray(body)) throw new Error('expected a JSON array of field mappings');
  sim.seedFieldMappings(sourceId, objectType, body);
}

/** `{ lenient?: boolean, chaos?: ChaosOptions | null }`: either part, or both; `chaos: null` turns chaos off. */
function setChaos(sim: Simulator, body: Record<string, unknown>): void {
  if (body.lenient !== undefined) {
    if (typeof body.lenient !== 'boolean')
      throw new Error(`lenient must be true or false, got ${JSON.stringify(body.lenient)}`);
    sim.setLenientUploads(body.lenient);
  }
  if (body.chaos === undefined) return;
  const chaos = body.chaos as ChaosOptions | null;
  if (
    chaos !== null &&
    (typeof chaos !== 'object' || typeof chaos.seed !== 'number' || typeof chaos.rates !== 'object')
  ) {
    throw new Error('chaos must be null or { seed: number, rates: { serverError?, tooManyRequests?, ... } }');
  }
  sim.setChaos(chaos ?? undefined);
}

function setJobOutcome(sim: Simulator, body: Record<string, unknown>): void {
  if (body.outcome !== 'completed' && body.outcome !== 'failed') {
    throw new Error(`outcome must be completed or failed, got ${JSON.stringify(body.outcome)}`);
  }
  sim.setJobOutcome(body.outcome);
}

function addFault(sim: Simulator, body: Record<string, unknown>): void {
  const count = body.count === undefined ? undefined : requireNumber(body, 'count');
  switch (body.kind) {
    case 'failNext':
      sim.failNext(requireEndpoint(body), requireNumber(body, 'status'), {
        count,
        body: body.body,
        contentType: typeof body.contentType === 'string' ? body.contentType : undefined,
        echoToken: body.echoToken as TokenEcho | undefined,
      });
      return;
    case 'delayNext':
      sim.delayNext(requireEndpoint(body), requireNumber(body, 'ms'), { count });
      return;
    case 'applyThenDrop':
      sim.applyThenDrop(requireEndpoint(body), { count });
      return;
    case 'resetUploadAfter':
      sim.resetUploadAfter(requireNumber(body, 'bytes'), { count });
      return;
    case 'stallUploadAfter':
      sim.stallUploadAfter(requireNumber(body, 'bytes'), { count });
      return;
    case 'expireTokenNext':
      sim.expireTokenNext(requireEndpoint(body), { count });
      return;
    case 'commitUploadOnAnswer':
      sim.commitUploadOnAnswer(requireNumber(body, 'ms'), { count });
      return;
    case 'answerUploadEarly':
      sim.answerUploadEarly(requireNumber(body, 'bytes'), { count });
      return;
    case 'refuseUploadOnHeaders':
      sim.refuseUploadOnHeaders(requireNumber(body, 'status'), {
        count,
        body: body.body,
        contentType: typeof body.contentType === 'string' ? body.contentType : undefined,
      });
      return;
    case 'spellStates':
      sim.spellStates((body.spelling ?? {}) as StateSpelling, { count });
      return;
    default:
      addJobFault(sim, body, count);
  }
}

/** The job endpoints' faults (job-faults.ts), e.g. { kind: 'commitCreateLate', afterMs: 2000, answer: 500 }. */
function addJobFault(sim: Simulator, body: Record<string, unknown>, count: number | undefined): void {
  const faults = sim.jobFaults;
  switch (body.kind) {
    case 'commitCreateLate': {
      const { answer } = body;
      const late = answer === 'timeout' || answer === 'reset' ? answer : { status: requireNumber(body, 'answer') };
      faults.commitCreateLate({ afterMs: requireNumber(body, 'afterMs'), answer: late }, count);
      return;
    }
    case 'listCreatedLate':
      faults.listCreatedLate(requireNumber(body, 'afterMs'), count);
      return;
    case 'truncateNames':
      faults.truncateNames(requireNumber(body, 'maxChars'), count);
      return;
    case 'bigIds':
      faults.bigIds(count);
      return;
    case 'ignoreSort':
      faults.ignoreSort(count);
      return;
    case 'capPerPage':
      faults.capPerPage(requireNumber(body, 'max'), count);
      return;
    case 'holdProcessing':
      faults.holdProcessing(count);
      return;
    case 'omitFields': {
      const fields = body.fields;
      if (fields !== undefined && !(Array.isArray(fields) && fields.every((f) => typeof f === 'string'))) {
        throw new Error(`fields must be an array of field names, got ${JSON.stringify(fields)}`);
      }
      faults.omitFields(requireEndpoint(body), fields as string[] | undefined, count);
      return;
    }
    default:
      throw new Error(`kind must be one of ${FAULT_KINDS.join(', ')}, got ${JSON.stringify(body.kind)}`);
  }
}

function requireEndpoint(body: Record<string, unknown>): ServiceEndpoint {
  const { endpoint } = body;
  if (isServiceEndpoint(endpoint)) return endpoint;
  throw new Error(
    `endpoint must name a service endpoint (e.g. createJob, submitData), got ${JSON.stringify(endpoint)}`,
  );
}

function requireNumber(body: Record<string, unknown>, field: string): number {
  const value = body[field];
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new Error(`${field} must be a number, got ${JSON.stringify(value)}`);
  }
  return value;
}
