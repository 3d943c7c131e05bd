/**
 * Manual starts and the nightly import one object version once, on a real
 * Temporal dev server with the real worker, s3rver and the service simulator:
 * the CLI's own `start` handler (no --workflow-id) names the import after the
 * object version, as the nightly names its children. So an object imported
 * by hand is skipped by the night, one the night imported is refused by
 * `start` with a message saying so, and a replaced object (new ETag) is a new
 * import.
 */
import { randomUUID } from 'node:crypto';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../worker/cli/cli-error.js';
import { startCommand } from '../../worker/cli/start-command.js';
import type { ImportFileInput } from '../../workflows/contracts/import-input.js';
import { objectImportWorkflowId } from '../../workflows/contracts/nightly.js';
import type { nightlyImport } from '../../workflows/nightly-import.js';
import { cliContext } from '../support/operator-actions.js';
import { accountsCsv, type OperatorStack, STACK_BUCKET, startOperatorStack } from '../support/operator-stack.js';
import { simJobs } from '../support/sim-inspect.js';

const PREFIX = 'manual/';
const BY_HAND = `${PREFIX}2026-11-21.csv`;
const BY_NIGHT = `${PREFIX}2026-11-22.csv`;

describe('a manual start and the nightly, on a real Temporal server', () => {
  let stack: OperatorStack;
  let ctx: ReturnType<typeof cliContext>;

  beforeAll(async () => {
    stack = await startOperatorStack();
    await stack.putObject(BY_HAND, accountsCsv(30_000));
    await stack.putObject(BY_NIGHT, accountsCsv(40_000));
    await stack.startWorker();
    ctx = cliContext(stack.workerEnv());
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
  });

  const startByHand = (key: string) =>
    startCommand({ bucket: STACK_BUCKET, key, entityType: 'Account', listAction: 'insert', wait: true }, ctx);
  const jobsFor = async (key: string) =>
    (await simJobs(stack.sim.baseUrl)).filter((job) => job.dataImportName.includes(key.slice(PREFIX.length)));
  const etagOf = async (key: string) =>
    (await stack.s3.client.send(new HeadObjectCommand({ Bucket: STACK_BUCKET, Key: key }))).ETag as string;

  it('imports each object version once, whoever starts it first; a new version is a new import', async () => {
    // By hand first: the import runs under the object version's id.
    await startByHand(BY_HAND);
    const handId = objectImportWorkflowId(STACK_BUCKET, BY_HAND, await etagOf(BY_HAND));
    expect(await jobsFor(BY_HAND)).toHaveLength(1);

    // The night finds that import and starts only the other object.
    const night = await stack.env.client.workflow.execute<typeof nightlyImport>('nightlyImport', {
      taskQueue: stack.taskQueue,
      workflowId: `nightly-manual-${randomUUID()}`,
      args: [
        {
          feedId: 'manual',
          feed: {
            bucket: STACK_BUCKET,
            prefix: PREFIX,
            entityType: 'Account',
            listAction: 'insert',
            maxConcurrentImports: 2,
            tenant: 'default',
          },
        },
      ],
    });
    expect(night).toMatchObject({ started: 1, skippedAlreadyImported: 1, succeeded: 1, failedCount: 0 });
    expect(await jobsFor(BY_HAND)).toHaveLength(1);
    expect(await jobsFor(BY_NIGHT)).toHaveLength(1);
    expect(ctx.printed[0]).toBe(`started importFile ${handId}`);

    // By hand after the night: refused with the reason, and nothing more reaches the service.
    const refused = await startByHand(BY_NIGHT).then(
      () => undefined,
      (err: unknown) => err,
    );
    const nightId = objectImportWorkflowId(STACK_BUCKET, BY_NIGHT, await etagOf(BY_NIGHT));
    expect(refused).toBeInstanceOf(CliError);
    expect((refused as CliError).message).toMatch(
      new RegExp(
        `^s3://${STACK_BUCKET}/${BY_NIGHT} \\(ETag [0-9a-f]+\\) was already imported by workflow ${nightId}; nothing started`,
      ),
    );
    expect(await jobsFor(BY_NIGHT)).toHaveLength(1);

    // The object replaced: a new version, a new import.
    await stack.putObject(BY_NIGHT, accountsCsv(45_000));
    ctx.printed.length = 0;
    await startByHand(BY_NIGHT);
    const newId = objectImportWorkflowId(STACK_BUCKET, BY_NIGHT, await etagOf(BY_NIGHT));
    expect(newId).not.toBe(nightId);
    expect(ctx.printed[0]).toBe(`started importFile ${newId}`);
    expect(await jobsFor(BY_NIGHT)).toHaveLength(2);
  });

  it('names the import that still runs when the same version is started again', async () => {
    // A task queue no worker polls: the first import stays running for as long as the test needs.
    const idle = cliContext(stack.workerEnv({ IMPORT_TASK_QUEUE: `idle-${randomUUID()}` }));
    const start = () =>
      startCommand({ bucket: STACK_BUCKET, key: BY_HAND, entityType: 'Account', listAction: 'insert' }, idle);
    await stack.putObject(BY_HAND, accountsCsv(31_000));
    await start();
    const id = objectImportWorkflowId(STACK_BUCKET, BY_HAND, await etagOf(BY_HAND));
    try {
      const err = await start().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(CliError);
      expect((err as CliError).message).toMatch(
        new RegExp(
          `^s3://${STACK_BUCKET}/${BY_HAND} \\(ETag [0-9a-f]+\\) is already being imported by workflow ${id}; nothing started`,
        ),
      );
      expect(idle.printed.filter((line) => line.startsWith('started'))).toEqual([`started importFile ${id}`]);
    } finally {
      await stack.env.client.workflow.getHandle(id).terminate('test done');
    }
  });

  it('says in one line that an object it cannot read cannot be named, and starts nothing', async () => {
    const missing = `${PREFIX}no-such-file.csv`;
    const err = await startByHand(missing).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).message).toMatch(
      new RegExp(`^cannot read s3://${STACK_BUCKET}/${missing} to name its import \\(.+\\); .*pass --workflow-id`),
    );
    expect((err as CliError).message).not.toContain('\n');
    expect(await jobsFor(missing)).toEqual([]);
  });

  it("applies IMPORT_JOB_TIMEOUT to the import it starts: the job wait gets the operator's deadline", async () => {
    const key = `${PREFIX}timed.csv`;
    await stack.putObject(key, accountsCsv(50_000));
    const timed = cliContext(stack.workerEnv({ IMPORT_JOB_TIMEOUT: '90m' }));
    await startCommand({ bucket: STACK_BUCKET, key, entityType: 'Account', listAction: 'insert', wait: true }, timed);

    const id = objectImportWorkflowId(STACK_BUCKET, key, await etagOf(key));
    const events = (await stack.env.client.workflow.getHandle(id).fetchHistory()).events ?? [];
    const started = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    expect(defaultPayloadConverter.fromPayload<ImportFileInput>(started ?? {}).jobTimeoutMs).toBe(90 * 60_000);
    const wait = events.find(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'awaitJobCompletion',
    )?.activityTaskScheduledEventAttributes;
    const waitInput = defaultPayloadConverter.fromPayload<{ timeoutMs: number }>(wait?.input?.payloads?.[0] ?? {});
    expect(waitInput.timeoutMs).toBe(90 * 60_000);
    // The job timeout, and ten minutes for the last read and the report.
    expect(Number(wait?.startToCloseTimeout?.seconds)).toBe(100 * 60);
  });
});
