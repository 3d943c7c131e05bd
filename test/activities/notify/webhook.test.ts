/**
 * The notify activity against a real local HTTP server: the body a Slack
 * webhook takes, the signature of the exact body, which answers are retried,
 * and that neither the secret nor the URL reaches a failure.
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeNotify } from '../../../activities/notify/webhook.js';
import type { NotificationInput } from '../../../workflows/contracts/notification.js';
import { closedPort } from '../../support/closed-port.js';

const event: NotificationInput = {
  id: 'import-1/run-1/import-failed',
  kind: 'import-failed',
  text: 'Import import-1 failed: uploadData failed (Unauthorized).',
  fields: { workflowId: 'import-1', step: 'uploadData' },
};

describe('the notify activity', () => {
  let server: Server;
  let url: string;
  let answer = 200;
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'webhook-test-'));
  const secretFile = join(dir, 'secret');

  beforeAll(async () => {
    writeFileSync(secretFile, 'shared-secret-do-not-send\n');
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(answer).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/services/secret-path`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('posts Slack-compatible JSON with the event, its id as Idempotency-Key, signed over the exact body', async () => {
    answer = 200;
    await makeNotify({ url, secretFile, timeoutMs: 5_000 })(event);
    const { headers, body } = received.at(-1)!;
    expect(JSON.parse(body)).toMatchObject({
      text: event.text,
      blocks: [{ type: 'section' }, { type: 'section', fields: expect.any(Array) }],
      event: { id: event.id, kind: 'import-failed', fields: event.fields },
    });
    expect(headers['idempotency-key']).toBe(event.id);
    const expected = createHmac('sha256', 'shared-secret-do-not-send').update(body).digest('hex');
    expect(headers['x-signature-256']).toBe(`sha256=${expected}`);
    expect(body).not.toContain('shared-secret-do-not-send');
  });

  it('sends unsigned without a secret file, and nothing at all without a webhook', async () => {
    answer = 200;
    const before = received.length;
    await makeNotify(undefined)(event);
    expect(received.length).toBe(before);
    await makeNotify({ url, timeoutMs: 5_000 })(event);
    expect(received.at(-1)?.headers['x-signature-256']).toBeUndefined();
  });

  it('fails retryably on 500 and 429, for good on another 4xx, naming neither the URL nor the secret', async () => {
    const notify = makeNotify({ url, secretFile, timeoutMs: 5_000 });
    const failureOf = async (status: number) => {
      answer = status;
      return (await notify(event).catch((err: unknown) => err)) as ApplicationFailure;
    };
    for (const [status, nonRetryable] of [
      [500, false],
      [429, false],
      [404, true],
    ] as const) {
      const failure = await failureOf(status);
      expect(failure).toBeInstanceOf(ApplicationFailure);
      expect(failure.message).toBe(`the webhook answered ${status}`);
      expect(failure.nonRetryable).toBe(nonRetryable);
    }
    const closed = await closedPort();
    const unreachable = makeNotify({ url: `http://127.0.0.1:${closed}/services/secret-path`, timeoutMs: 5_000 });
    const failure = (await unreachable(event).catch((err: unknown) => err)) as ApplicationFailure;
    expect(failure.type).toBe('WebhookUnreachable');
    expect(failure.message).toBe('the webhook could not be reached (ECONNREFUSED)');
    expect(failure.message).not.toContain('secret-path');
  });
});
