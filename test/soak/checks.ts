/**
 * The soak's verdict, from the simulator's own record and Temporal's:
 * second jobs per object version, bodies accepted twice, lost or partial
 * files, calls over a budget, stuck imports, operator pages for transient
 * faults and secrets in any history or log. Every fault the soak injects is
 * transient, so any import that failed or waits for an operator is a page for
 * a transient fault.
 */
import { tokenEchoSpellings } from '../simulator/auth.js';
import type { JobRecord, ServiceRecord } from '../simulator/server.js';
import type { SoakObject } from './objects.js';
import type { ExecutionView } from './temporal-record.js';

export const CHECKS = [
  'second-jobs',
  'double-accepts',
  'lost',
  'over-budget',
  'stuck',
  'transient-pages',
  'secrets',
] as const;
export type Check = (typeof CHECKS)[number];

export interface Violation {
  check: Check;
  detail: string;
}

export interface SoakEvidence {
  objects: SoakObject[];
  jobs: JobRecord[];
  record: ServiceRecord;
  counters: Record<string, number>;
  limits: Record<string, number>;
  executions: ExecutionView[];
  /** Worker, CLI and server logs: name -> text. */
  logs: Map<string, string>;
  tokens: string[];
}

export function judge(e: SoakEvidence): Violation[] {
  return [
    ...secondJobs(e),
    ...doubleAccepts(e),
    ...lostFiles(e),
    ...overBudget(e),
    ...openImports(e),
    ...failedImports(e),
    ...secrets(e),
  ];
}

/** The object a job was made for: by a body it accepted, else by the name the import gave it. */
function objectOf(job: JobRecord, objects: SoakObject[]): SoakObject | undefined {
  const sha = job.acceptedBodies[0]?.sha256;
  const byContent = sha && objects.find((o) => o.bodies.some((b) => b.sha256 === sha));
  if (byContent) return byContent;
  const name = job.dataImportName.replace(/^\[import:[^\]]*\]\s*/, '');
  return objects.find((o) => o.name === name);
}

/** One job per body the object should give: one, or one per part of a split file. */
function secondJobs(e: SoakEvidence): Violation[] {
  const byObject = new Map<string, { allowed: number; jobs: JobRecord[] }>();
  for (const job of e.jobs) {
    const object = objectOf(job, e.objects);
    const id = object ? `${object.bucket}/${object.key}@${object.etag}` : `unknown name ${job.dataImportName}`;
    const group = byObject.get(id) ?? { allowed: object?.bodies.length ?? 1, jobs: [] };
    group.jobs.push(job);
    byObject.set(id, group);
  }
  return [...byObject].flatMap(([object, { allowed, jobs }]) =>
    jobs.slice(allowed).map(() => ({
      check: 'second-jobs' as const,
      detail: `${object}: ${jobs.length} jobs for ${allowed} bod${allowed === 1 ? 'y' : 'ies'} (${jobs.map((j) => `${j.id} ${j.state} ${j.acceptedBodies.length} bodies, named ${JSON.stringify(j.dataImportName)}`).join('; ')})`,
    })),
  );
}

function doubleAccepts(e: SoakEvidence): Violation[] {
  return Object.entries(e.record.bodiesByJob)
    .filter(([, bodies]) => bodies.length > 1)
    .map(([id, bodies]) => ({
      check: 'double-accepts' as const,
      detail: `job ${id} accepted ${bodies.length} complete bodies at ${bodies.map((b) => b.at).join(', ')}`,
    }));
}

function lostFiles(e: SoakEvidence): Violation[] {
  const out: Violation[] = [];
  const expected = (o: SoakObject, sha: string, bytes: number) =>
    o.bodies.some((b) => b.sha256 === sha && b.bytes === bytes);
  for (const [id, bodies] of Object.entries(e.record.bodiesByJob)) {
    for (const body of bodies) {
      if (!e.objects.some((o) => expected(o, body.sha256, body.bytes))) {
        out.push({
          check: 'lost',
          detail: `job ${id} accepted ${body.bytes} bytes that are no object's whole file or part`,
        });
      }
    }
  }
  // Every body of every file put in S3 for an import is imported, unless its import still waits for a budget window.
  const accepted = new Set(Object.values(e.record.bodiesByJob).flatMap((bodies) => bodies.map((b) => b.sha256)));
  for (const o of e.objects) {
    if (waitsForBudget(e.executions, o)) continue;
    const missing = o.bodies.filter((b) => !accepted.has(b.sha256)).length;
    if (missing > 0) {
      out.push({
        check: 'lost',
        detail: `${o.key} (${o.bytes} B): ${missing} of ${o.bodies.length} bodies never imported`,
      });
    }
  }
  for (const x of e.executions) {
    if (x.type !== 'importFile' || x.status !== 'COMPLETED') continue;
    const object = e.objects.find((o) => o.bucket === x.input?.source?.bucket && o.key === x.input?.source?.key);
    const jobIds = x.result?.parts?.map((p) => p.jobId) ?? [x.result?.jobId ?? ''];
    for (const [i, jobId] of jobIds.entries()) {
      const bodies = e.record.bodiesByJob[jobId] ?? [];
      const want = object?.bodies[i];
      if (!want || jobIds.length !== object.bodies.length || !bodies.some((b) => b.sha256 === want.sha256)) {
        out.push({
          check: 'lost',
          detail: `${x.workflowId} completed with job ${jobId} (part ${i + 1} of ${jobIds.length}), which holds ${bodies.length ? 'other bytes' : 'no body'} (${x.input?.source?.key})`,
        });
      }
    }
  }
  return out;
}

function waitsForBudget(executions: ExecutionView[], o: SoakObject): boolean {
  return executions.some(
    (x) =>
      x.type === 'importFile' &&
      x.status === 'RUNNING' &&
      x.input?.source?.bucket === o.bucket &&
      x.input?.source?.key === o.key &&
      x.progress?.waitingForBudgetUntil !== undefined,
  );
}

function overBudget(e: SoakEvidence): Violation[] {
  const refused = Object.entries(e.record.dailyLimitRefusals).map(([endpoint, n]) => ({
    check: 'over-budget' as const,
    detail: `${n} call(s) to ${endpoint} over the service's daily limit of ${e.limits[endpoint]}`,
  }));
  const over = Object.entries(e.counters)
    .filter(([endpoint, n]) => n > (e.limits[endpoint] ?? Number.POSITIVE_INFINITY))
    .map(([endpoint, n]) => ({ check: 'over-budget' as const, detail: `${endpoint}: ${n} > ${e.limits[endpoint]}` }));
  return [...refused, ...over];
}

/** Open imports and nights that neither wait for an operator nor for a budget window. */
function openImports(e: SoakEvidence): Violation[] {
  return e.executions
    .filter((x) => x.status === 'RUNNING' && (x.type === 'importFile' || x.type === 'nightlyImport'))
    .filter((x) => !x.progress?.awaitingRetry && !x.progress?.waitingForBudgetUntil)
    .map((x) => ({
      check: 'stuck' as const,
      detail: `${x.type} ${x.workflowId} still running, phase ${x.progress?.phase ?? '?'}${x.pending.length ? `; pending: ${x.pending.join(' | ')}` : ''}`,
    }));
}

function failedImports(e: SoakEvidence): Violation[] {
  const out: Violation[] = [];
  for (const x of e.executions) {
    if (x.type !== 'importFile') continue;
    if (x.status === 'FAILED' || x.status === 'TIMED_OUT' || x.status === 'TERMINATED') {
      out.push({
        check: 'transient-pages',
        detail: `${x.workflowId} ${x.status} ${x.failure?.type ?? ''}: ${(x.failure?.message ?? '').slice(0, 300)}`,
      });
    }
    const waiting = x.status === 'RUNNING' ? x.progress?.awaitingRetry : undefined;
    if (waiting) {
      out.push({
        check: 'transient-pages',
        detail: `${x.workflowId} awaits an operator after ${waiting.step} ${waiting.failureType}: ${waiting.failure.slice(0, 300)}`,
      });
    }
  }
  return out;
}

function secrets(e: SoakEvidence): Violation[] {
  const spellings = e.tokens.flatMap((t) => tokenEchoSpellings(t));
  const out: Violation[] = [];
  const look = (where: string, text: string) => {
    const hit = spellings.find((s) => s.length >= 8 && text.includes(s));
    if (hit) out.push({ check: 'secrets', detail: `${where} holds a spelling of a service token` });
  };
  for (const x of e.executions) look(`history of ${x.type} ${x.workflowId}/${x.runId}`, x.historyText);
  for (const [name, text] of e.logs) look(name, text);
  return out;
}
