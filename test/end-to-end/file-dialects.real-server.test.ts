/**
 * The files people have, on the whole stack (real Temporal dev server, the
 * real worker, s3rver, the service simulator): a gzip export whose key does
 * not say so, a `;`-delimited Windows-1252 export, a file with rows the
 * service would refuse (skipped or failing the import), a header-only file,
 * a file already in the service's form, a row longer than any buffer of the
 * reader, and a gzip object whose reads S3 cuts mid-stream. The simulator's
 * record of each accepted body (bytes and sha256) is the witness of what the
 * service got; s3rver holds the rejects report. The worker reaches s3rver
 * through a proxy that can cut a GET (test/activities/s3/s3-proxy.ts).
 */
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../worker/cli/main.js';
import type { ImportFileInput, RowOptions } from '../../workflows/contracts/import-input.js';
import type { ImportFileResult } from '../../workflows/contracts/import-workflow.js';
import type { importFile } from '../../workflows/import-file.js';
import { type S3Proxy, startS3Proxy } from '../activities/s3/s3-proxy.js';
import { cliContext } from '../support/operator-actions.js';
import { accountsCsv, type OperatorStack, sha256, startOperatorStack } from '../support/operator-stack.js';
import { jobsNamed, simRequests } from '../support/sim-inspect.js';

const HEADER = 'Account Name,Account Domain';

/** Windows-1252 bytes of `text`: Latin-1, with the euro sign at 0x80 (the one non-Latin-1 character used here). */
function windows1252(text: string): Buffer {
  return Buffer.from([...text].map((ch) => (ch === '€' ? 0x80 : ch.charCodeAt(0))));
}

/** The canonical body of `rows` (each a list of fields): comma, RFC 4180 quoting, CRLF. */
function canonical(rows: string[][]): string {
  const field = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
  return rows.map((r) => `${r.map(field).join(',')}\r\n`).join('');
}

/** Numbered account rows, with refused ones at fixed places: enough bytes that an upload can be cut mid-body. */
function rowsWithBadOnes(count: number): { file: string; sent: string[][]; rejectedRows: number[] } {
  const lines = [HEADER];
  const sent: string[][] = [HEADER.split(',')];
  const rejectedRows: number[] = [];
  for (let i = 0; i < count; i++) {
    const row = i + 2;
    if (i % 1000 === 500) {
      lines.push(`Company ${i},`); // the domain, a required field, is empty
      rejectedRows.push(row);
    } else if (i % 1000 === 900) {
      lines.push(`Company ${i},company-${i}.example.com,extra`); // a field more than the header
      rejectedRows.push(row);
    } else {
      lines.push(`Company ${i},company-${i}.example.com`);
      sent.push([`Company ${i}`, `company-${i}.example.com`]);
    }
  }
  return { file: `${lines.join('\n')}\n`, sent, rejectedRows };
}

const EventType = temporal.api.enums.v1.EventType;

/** The attempt that ran `activityType` last (its started event), and why the one before it failed. */
function lastAttempt(history: temporal.api.history.v1.IHistory, activityType: string) {
  const events = history.events ?? [];
  const scheduled = events.find(
    (e) =>
      e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
      e.activityTaskScheduledEventAttributes?.activityType?.name === activityType,
  );
  const started = events.find(
    (e) =>
      e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED &&
      Number(e.activityTaskStartedEventAttributes?.scheduledEventId) === Number(scheduled?.eventId),
  )?.activityTaskStartedEventAttributes;
  return { attempt: started?.attempt, lastFailure: started?.lastFailure?.message };
}

/**
 * Account rows whose domains are pseudo-random (a fixed seed): gzip shrinks
 * them about threefold, not thirtyfold, so the compressed object is large.
 */
function scatteredAccounts(rows: number): { text: string; rows: number } {
  let seed = 0x2545f491;
  const letters = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const lines = [HEADER];
  for (let i = 0; i < rows; i++) {
    let domain = '';
    for (let c = 0; c < 40; c++) {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      domain += letters[(seed >>> 0) % letters.length];
    }
    lines.push(`Company ${i},${domain}.example.com`);
  }
  return { text: `${lines.join('\n')}\n`, rows };
}

describe('files as people have them, on the whole stack', () => {
  let stack: OperatorStack;
  let s3: S3Proxy;
  const bodiesOf = (jobId: string) => stack.sim.record().bodiesByJob[jobId] ?? [];

  beforeAll(async () => {
    stack = await startOperatorStack({ simulator: { processingMs: 500 } });
    s3 = await startS3Proxy(stack.s3.endpoint);
    await stack.startWorker({ S3_ENDPOINT: s3.endpoint });
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
    await s3?.close();
  });

  async function run(key: string, rows?: RowOptions): Promise<{ workflowId: string; result: ImportFileResult }> {
    const workflowId = `dialect-${randomUUID()}`;
    const result = await stack.env.client.workflow.execute<typeof importFile>('importFile', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [input(key, workflowId, rows)],
    });
    return { workflowId, result };
  }

  async function runFailing(
    key: string,
    rows?: RowOptions,
  ): Promise<{ workflowId: string; cause: ApplicationFailure }> {
    const workflowId = `dialect-${randomUUID()}`;
    const err = await stack.env.client.workflow
      .execute<typeof importFile>('importFile', {
        taskQueue: stack.taskQueue,
        workflowId,
        args: [input(key, workflowId, rows)],
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    return { workflowId, cause: cause as ApplicationFailure };
  }

  function input(key: string, workflowId: string, rows: RowOptions | undefined): ImportFileInput {
    return {
      source: { bucket: stack.bucket, key },
      dataImportName: `dialects ${workflowId}`,
      entityType: 'Account',
      listAction: 'insert',
      ...(rows ? { rows } : {}),
    };
  }

  async function s3Text(url: string): Promise<string> {
    const m = /^s3:\/\/([^/]+)\/(.+)$/.exec(url);
    if (!m) throw new Error(`not an s3 URL: ${url}`);
    const out = await stack.s3.client.send(new GetObjectCommand({ Bucket: m[1], Key: m[2] }));
    return (await out.Body?.transformToString('utf-8')) ?? '';
  }

  it('imports a gzip export whose key says nothing of it: the service receives canonical CSV', async () => {
    const text = `${HEADER}\nAcme,acme.example\n"Globex, Inc",globex.example\n`;
    await stack.putObject('exports/accounts-000', gzipSync(text));
    const { result } = await run('exports/accounts-000');
    const expected = canonical([HEADER.split(','), ['Acme', 'acme.example'], ['Globex, Inc', 'globex.example']]);
    expect(bodiesOf(result.jobId)).toEqual([
      expect.objectContaining({ bytes: Buffer.byteLength(expected), sha256: sha256(Buffer.from(expected)) }),
    ]);
    expect(result.rows).toMatchObject({ body: 'canonical', read: 2, sent: 2, rejected: 0 });
    expect(result.rows.dialect).toMatch(/^gzip, utf-8, ",", LF$/);
    expect(result.bytes).toBe(Buffer.byteLength(expected));
  });

  it('imports a ";"-delimited Windows-1252 export as UTF-8 comma CSV with the right characters', async () => {
    const text =
      'Account Name;Account Domain\r\nCafé Müller;cafe.example\r\nJones, Inc;jones.example\r\nEuro € AG;euro.example\r\n';
    await stack.putObject('exports/accounts-1252.csv', windows1252(text));
    const { result } = await run('exports/accounts-1252.csv', { encoding: 'windows-1252' });
    const expected = canonical([
      HEADER.split(','),
      ['Café Müller', 'cafe.example'],
      ['Jones, Inc', 'jones.example'],
      ['Euro € AG', 'euro.example'],
    ]);
    expect(bodiesOf(result.jobId)).toEqual([expect.objectContaining({ sha256: sha256(Buffer.from(expected)) })]);
    expect(result.rows).toMatchObject({ dialect: 'uncompressed, windows-1252, ";", CRLF', body: 'canonical', sent: 3 });
  });

  it('under skip sends the other rows once, across a body cut mid-way, and writes the rejects report once', async () => {
    const { file, sent, rejectedRows } = rowsWithBadOnes(40_000);
    await stack.putObject('exports/with-bad-rows.csv', file);
    const expected = Buffer.from(canonical(sent));
    // The first attempt's connection is reset a quarter of the way in: the retry regenerates the body.
    stack.sim.resetUploadAfter(Math.floor(expected.length / 4));
    const { workflowId, result } = await run('exports/with-bad-rows.csv', { onRejectedRows: 'skip' });

    expect(bodiesOf(result.jobId)).toEqual([
      expect.objectContaining({ bytes: expected.length, sha256: sha256(expected) }),
    ]);
    const puts = (await simRequests(stack.sim.baseUrl)).filter((r) => r.path === `/import/v1/job/${result.jobId}/data`);
    expect(puts.length).toBeGreaterThanOrEqual(2);
    expect(result.rows).toMatchObject({
      body: 'canonical',
      read: 40_000,
      sent: 40_000 - rejectedRows.length,
      rejected: rejectedRows.length,
    });
    const reportUrl = result.rows.rejectsReport;
    expect(reportUrl).toMatch(/^s3:\/\/operator-drops\/exports\/with-bad-rows\.csv\..+\.rejects\.csv$/);
    const report = (await s3Text(reportUrl!)).split('\r\n').filter((l) => l !== '');
    expect(report[0]).toBe('Source Row,Reason,Account Name,Account Domain');
    expect(report.slice(1).map((l) => Number(l.split(',')[0]))).toEqual(rejectedRows);
    expect(report[1]).toBe(`${rejectedRows[0]},"""Account Domain"" is empty",Company 500,`);

    // The same version imported again with the same settings names the same report, with the same bytes.
    const before = await s3Text(reportUrl!);
    const again = await run('exports/with-bad-rows.csv', { onRejectedRows: 'skip' });
    expect(again.result.rows.rejectsReport).toBe(reportUrl);
    expect(await s3Text(reportUrl!)).toBe(before);
    expect(workflowId).not.toBe(again.workflowId);
  });

  it('under fail creates no job, and says where the rejected rows are', async () => {
    const { file, rejectedRows } = rowsWithBadOnes(2_000);
    await stack.putObject('exports/refused.csv', file);
    const { workflowId, cause } = await runFailing('exports/refused.csv', { onRejectedRows: 'fail' });
    expect(cause.type).toBe('RowsRejected');
    expect(cause.message).toContain(`${rejectedRows.length} of 2000 row(s) would be refused by the service`);
    const url = /the rejects report is (s3:\/\/\S+?);/.exec(cause.message)?.[1];
    expect(url).toBeDefined();
    const report = (await s3Text(url!)).split('\r\n').filter((l) => l !== '');
    expect(report).toHaveLength(rejectedRows.length + 1);
    expect(await jobsNamed(stack.sim.baseUrl, workflowId)).toEqual([]);
  });

  it('refuses a header-only file before any job, saying so', async () => {
    await stack.putObject('exports/header-only.csv', `${HEADER}\r\n`);
    const { workflowId, cause } = await runFailing('exports/header-only.csv');
    expect(cause.type).toBe('EmptyFile');
    expect(cause.message).toContain('holds a header row and no data rows');
    expect(await jobsNamed(stack.sim.baseUrl, workflowId)).toEqual([]);
  });

  it('reads a ";"-delimited header under its real labels: a missing one is named, no job', async () => {
    await stack.putObject('exports/semicolon-short.csv', 'Account Name;Website\nAcme;acme.example\n');
    const { workflowId, cause } = await runFailing('exports/semicolon-short.csv');
    expect(cause.type).toBe('InvalidCsvHeader');
    expect(cause.message).toContain('lacks "Account Domain"');
    expect(cause.message).toContain('the header has "Account Name", "Website"');
    expect(await jobsNamed(stack.sim.baseUrl, workflowId)).toEqual([]);
  });

  it('the dry run shows the dialect and the rows it would refuse, on a sample it names as one', async () => {
    const { file } = rowsWithBadOnes(60_000);
    await stack.putObject('exports/dry-run.csv', file);
    const ctx = cliContext(stack.workerEnv());
    const args = ['start', '--bucket', stack.bucket, '--key', 'exports/dry-run.csv', '--entity-type', 'Account'];
    await main(['node', 'import-worker', ...args, '--dry-run'], ctx);
    const out = ctx.printed.join('\n');
    expect(out).toContain('format    uncompressed, utf-8, ",", LF');
    expect(out).toMatch(
      /rows {6}checked a sample: the first \d+ rows \([\d.]+ [KM]iB\); the import checks every row: \d+ would be refused/,
    );
    expect(out).toContain('(row 502: "Account Domain" is empty; row 902: 3 field(s); the header has 2;');
    expect(out).toMatch(/warning +\d+ row\(s\) of the sample would be refused by the service/);
  });

  it('sends a file already in the service form byte for byte', async () => {
    const file = accountsCsv(512 * 1024);
    await stack.putObject('exports/canonical.csv', file);
    const { result } = await run('exports/canonical.csv');
    expect(bodiesOf(result.jobId)).toEqual([expect.objectContaining({ bytes: file.length, sha256: sha256(file) })]);
    expect(result.rows).toMatchObject({ body: 'original', rejected: 0 });
    expect(result.rows.rejectsReport).toBeUndefined();
  });

  it('passes a row longer than any buffer of the reader whole, quotes, delimiters and line breaks in it', async () => {
    // Far longer than a chunk of the S3 read and a batch of the strict reader (64 KiB).
    const long = `a "quoted" word; then a line\n${'x'.repeat(300_000)}`;
    const text = `Account Name;Account Domain\nBefore;before.example\n"${long.replaceAll('"', '""')}";long.example\nAfter;after.example\n`;
    await stack.putObject('exports/long-row.csv', text);
    const { result } = await run('exports/long-row.csv');
    const expected = canonical([
      HEADER.split(','),
      ['Before', 'before.example'],
      [long, 'long.example'],
      ['After', 'after.example'],
    ]);
    expect(bodiesOf(result.jobId)).toEqual([
      expect.objectContaining({ bytes: Buffer.byteLength(expected), sha256: sha256(Buffer.from(expected)) }),
    ]);
    expect(result.rows).toMatchObject({ body: 'canonical', read: 3, sent: 3, rejected: 0 });
  });

  it('a gzip object S3 cuts mid-stream, in the check and in the upload: read again, every row sent once', async () => {
    const { text, rows } = scatteredAccounts(30_000);
    const gz = gzipSync(text);
    // Past what the sockets hold before the reader takes any (a few hundred kB): the upload's PUT is streaming when
    // its read is cut.
    const cutAt = Math.floor(gz.length * 0.8);
    expect(cutAt).toBeGreaterThan(700 * 1024);
    await stack.putObject('exports/cut-mid-stream', gz);
    // The check's whole read is cut; so is the upload's, armed as its job is made.
    s3.cutNextGetAfter(cutAt, 'wholeObject');
    const stopListening = stack.sim.onRequest((request) => {
      if (request.endpoint !== 'createJob') return;
      s3.cutNextGetAfter(cutAt, 'wholeObject');
      stopListening();
    });
    const { workflowId, result } = await run('exports/cut-mid-stream').finally(stopListening);

    const expected = Buffer.from(text.replaceAll('\n', '\r\n'));
    expect(bodiesOf(result.jobId)).toEqual([
      expect.objectContaining({ bytes: expected.length, sha256: sha256(expected) }),
    ]);
    expect(result.rows).toMatchObject({ body: 'canonical', read: rows, sent: rows, rejected: 0 });
    // The cut upload's PUT ended short of its length; the next attempt's body was the one accepted.
    const puts = (await simRequests(stack.sim.baseUrl)).filter((r) => r.path === `/import/v1/job/${result.jobId}/data`);
    expect(puts.map((p) => p.bodyComplete)).toEqual([false, true]);
    expect(await jobsNamed(stack.sim.baseUrl, workflowId)).toHaveLength(1);
    const history = await stack.env.client.workflow.getHandle(workflowId).fetchHistory();
    expect(lastAttempt(history, 'planRows')).toMatchObject({ attempt: 2, lastFailure: 'aborted' });
    expect(lastAttempt(history, 'uploadData')).toMatchObject({
      attempt: 2,
      lastFailure: expect.stringContaining('failed during the upload (Error: aborted); retried'),
    });
  });
});
