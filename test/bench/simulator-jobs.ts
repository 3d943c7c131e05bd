/** The benchmarks' direct use of the simulator: make a job, read what it received, check it was byte-exact. */
import { DEMO_TOKENS } from '../simulator/server.js';
import type { JobRecord } from '../simulator/types.js';

export async function createJob(simulatorUrl: string): Promise<string> {
  const res = await fetch(`${simulatorUrl}/import/v1/job`, {
    method: 'POST',
    headers: { authorization: `Bearer ${DEMO_TOKENS.importer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ dataImportName: 'upload benchmark', entityType: 'Account' }),
  });
  if (!res.ok) throw new Error(`creating a job on the simulator failed: HTTP ${res.status}`);
  return String(((await res.json()) as { id: number | string }).id);
}

export async function receivedJob(simulatorUrl: string, jobId: string): Promise<JobRecord> {
  const res = await fetch(`${simulatorUrl}/__sim/jobs/${jobId}`);
  if (!res.ok) throw new Error(`reading job ${jobId} from the simulator failed: HTTP ${res.status}`);
  return (await res.json()) as JobRecord;
}

export function verify(what: string, job: JobRecord, sizeBytes: number, sha256: string): void {
  if (job.bytesReceived !== sizeBytes || job.sha256 !== sha256 || job.uploads !== 1) {
    throw new Error(
      `${what} was not byte-exact: the simulator received ${job.bytesReceived} bytes (sha256 ${job.sha256}, ` +
        `uploads ${job.uploads}); expected ${sizeBytes} bytes with sha256 ${sha256}, uploaded once`,
    );
  }
}
