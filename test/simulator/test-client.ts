/** A tiny fetch-based client for the simulator's own tests: real sockets, no service-client code. */
import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_TOKENS, type Simulator } from './server.js';

export const IMPORTER = { authorization: `Bearer ${DEMO_TOKENS.importer}` };

interface Answer {
  status: number;
  body: unknown;
  text: string;
}

export async function call(
  sim: Simulator,
  method: string,
  path: string,
  options: { body?: unknown; raw?: string | Buffer; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...IMPORTER, ...options.headers };
  let body: string | Buffer | undefined = options.raw;
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const res = await fetch(`${sim.baseUrl}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text };
}

export async function createJob(sim: Simulator, fields: Record<string, unknown> = {}): Promise<{ id: number }> {
  const answer = await call(sim, 'POST', '/import/v1/job', {
    body: { dataImportName: 'nightly accounts', entityType: 'Account', ...fields },
  });
  if (answer.status !== 200) throw new Error(`create job answered ${answer.status}: ${answer.text}`);
  return answer.body as { id: number };
}

export function upload(sim: Simulator, id: number, data: string | Buffer, listAction = 'noop'): Promise<Answer> {
  return call(sim, 'PUT', `/import/v1/job/${id}/data?listAction=${listAction}`, {
    raw: data,
    headers: { 'content-type': 'application/octet-stream' },
  });
}

/** Polls the job over the API until it leaves `processing`; the test's own timeout bounds the wait. */
export async function waitForOutcome(sim: Simulator, id: number): Promise<Record<string, unknown>> {
  for (;;) {
    const { body } = await call(sim, 'GET', `/import/v1/job/${id}`);
    const job = body as Record<string, unknown>;
    if (job.state !== 'processing' && job.state !== 'new') return job;
    await sleep(10);
  }
}

/** Waits until a condition on the simulator's state holds; the test's own timeout bounds the wait. */
/** A data PUT the test can abort mid-way (the client going away); `pending` rejects once it does. */
export function abortableUpload(sim: Simulator, id: number, body: string | Buffer) {
  const abort = new AbortController();
  const pending = fetch(`${sim.baseUrl}/import/v1/job/${id}/data`, {
    method: 'PUT',
    headers: { ...IMPORTER, 'content-type': 'application/octet-stream' },
    body,
    signal: abort.signal,
  });
  return { pending, abort: () => abort.abort() };
}

export async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await sleep(5);
}
