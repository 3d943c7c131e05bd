/**
 * awaitJobCompletion reads job states the way uploadData does (a state
 * the spec does not name): `COMPLETED` and `FAILED` are what they say, and a state the spec
 * does not name ends the wait with a clear failure instead of a silent one.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeAwaitJobCompletion } from '../../activities/await-job-completion.js';
import type {
  AwaitJobCompletionInput,
  AwaitJobCompletionResult,
  PollProgress,
} from '../../workflows/contracts/activities.js';
import { failureOf, runActivity } from '../support/activities.js';
import { budgetWith, type ServiceWorld, startServiceWorld } from './environment.js';

const CSV = Buffer.from('Account Name,Account Domain\nAcme,acme.example\n');
/** Far more polls than any test makes: the spelling holds for the whole wait. */
const ALWAYS = 1_000;

describe('awaitJobCompletion and the spelling of job states', () => {
  let w: ServiceWorld;
  beforeAll(async () => {
    w = await startServiceWorld({ processingMs: 0 });
  });
  afterAll(() => w.close());
  beforeEach(() => {
    w.sim.clearFaults();
    w.sim.setJobOutcome('completed');
  });

  const run = (input: AwaitJobCompletionInput) =>
    runActivity<AwaitJobCompletionInput, AwaitJobCompletionResult, PollProgress>(
      makeAwaitJobCompletion({
        service: w.service,
        budget: budgetWith(),
        poll: { scheduleMs: [10], jitterRatio: 0 },
        heartbeatIntervalMs: 5,
      }),
      input,
    );

  async function finishedJob(): Promise<string> {
    const job = await w.service.createJob({ dataImportName: 'states', entityType: 'Account' });
    await w.service.submitData(job.id, [CSV], { contentLength: CSV.length });
    while (w.sim.job(job.id)?.state === 'processing') await new Promise((r) => setTimeout(r, 5));
    return job.id;
  }

  it.each(['COMPLETED', 'Completed'])('takes %s for completed at the first poll', async (spelled) => {
    const jobId = await finishedJob();
    w.sim.spellStates({ completed: spelled }, { count: ALWAYS });

    const result = await run({ tenant: 't1', jobId, timeoutMs: 5_000 }).result;

    expect(result).toMatchObject({ state: 'completed', polls: 1 });
  });

  it('takes FAILED for failed: JobFailed at the first poll', async () => {
    w.sim.setJobOutcome('failed');
    const jobId = await finishedJob();
    w.sim.spellStates({ failed: 'FAILED' }, { count: ALWAYS });

    const a = run({ tenant: 't1', jobId, timeoutMs: 5_000 });
    const f = await failureOf(a.result);

    expect(f.type).toBe('JobFailed');
    expect(a.heartbeats.at(-1)).toMatchObject({ pollIndex: 1, lastState: 'FAILED' });
  });

  it('fails UnexpectedJobState on a state the spec does not name, showing it, instead of waiting', async () => {
    const jobId = await finishedJob();
    w.sim.spellStates({ completed: 'archived' }, { count: ALWAYS });

    const a = run({ tenant: 't1', jobId, timeoutMs: 5_000 });
    const f = await failureOf(a.result);

    expect(f.type).toBe('UnexpectedJobState');
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toContain('"archived"');
    expect(a.heartbeats.at(-1)).toMatchObject({ pollIndex: 1, lastState: 'archived' });
  });
});
