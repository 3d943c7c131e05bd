/**
 * What the service simulator saw, read through its /__sim inspection API, so
 * the answer is the same whether the simulator runs in this process or not:
 * the jobs (with the sha256 of each accepted upload) and every request.
 */
import type { JobRecord, RequestRecord } from '../simulator/server.js';

async function get<T>(baseUrl: string, path: string): Promise<T> {
  const res = await fetch(`${baseUrl}/__sim/${path}`);
  if (!res.ok) throw new Error(`GET /__sim/${path} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

export const simJobs = (baseUrl: string) => get<JobRecord[]>(baseUrl, 'jobs');
export const simRequests = (baseUrl: string) => get<RequestRecord[]>(baseUrl, 'requests');

/**
 * Every job whose name carries `marker` (a test puts the workflow id in the
 * import's name): found by what the service holds, not by how the worker
 * derives its job key, so the count stays honest whatever that derivation is.
 */
export async function jobsNamed(baseUrl: string, marker: string): Promise<JobRecord[]> {
  return (await simJobs(baseUrl)).filter((job) => job.dataImportName.includes(marker));
}

/** The data PUTs the service accepted (200) for one job: more than one would be a second upload. */
export async function acceptedPuts(baseUrl: string, jobId: string): Promise<RequestRecord[]> {
  return (await simRequests(baseUrl)).filter(
    (r) => r.endpoint === 'submitData' && r.path === `/import/v1/job/${jobId}/data` && r.status === 200,
  );
}

/** How many requests of each endpoint reached the service, whatever it answered. */
export function requestsPerEndpoint(requests: RequestRecord[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of requests) counts[r.endpoint] = (counts[r.endpoint] ?? 0) + 1;
  return counts;
}
