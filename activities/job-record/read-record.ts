/**
 * A look at an object version's job record that changes nothing, for the
 * dry run: a describe, then a query of a running record or the result of a
 * closed one. Never an Update and never update-with-start, so no record is
 * started, claimed or written to, and its history gains no event.
 */
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import {
  type JobRecordReading,
  type JobRecordResult,
  jobRecordWorkflowId,
  type TenantObjectVersion,
} from '../../workflows/contracts/job-record.js';
import { jobRecordQuery } from '../../workflows/contracts/messages.js';

export async function readJobRecord(client: Client, version: TenantObjectVersion): Promise<JobRecordReading> {
  const workflowId = jobRecordWorkflowId(version);
  let status: string;
  let runId: string;
  try {
    const described = await client.workflow.getHandle(workflowId).describe();
    status = described.status.name;
    runId = described.runId;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return { status: 'absent' };
    throw err;
  }
  if (status === 'RUNNING') {
    // The latest run: one that continued as new meanwhile answers with what it carried.
    return { status: 'running', view: await client.workflow.getHandle(workflowId).query(jobRecordQuery) };
  }
  if (status === 'COMPLETED') {
    const result = (await client.workflow.getHandle(workflowId, runId).result()) as JobRecordResult;
    return { status: result.outcome, view: result.view };
  }
  // Failed, terminated, timed out: the gate's reuse policy lets the next import start a record afresh.
  return { status: 'ended' };
}
