/**
 * Failure notifications from a real worker process on the full stack to a
 * real local HTTP receiver: a failing import produces exactly one logical
 * notification (a receiver that answers 500 first gets it again, with the same
 * id), signed with the shared secret from its file, and carrying neither the
 * service token nor the secret; an import waiting for an operator produces one
 * too.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGNATURE_HEADER, signatureOf } from '../../activities/notify/webhook.js';
import type { ImportFileInput } from '../../workflows/contracts/import-input.js';
import { abandonSignal, progressQuery } from '../../workflows/contracts/messages.js';
import type { importFile } from '../../workflows/import-file.js';
import { DEMO_TOKENS } from '../simulator/server.js';
import { type FullStack, startFullStack } from '../support/full-stack.js';
import { type WorkerPool, workerPool } from '../support/killable-worker.js';

interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

interface Event {
  text: string;
  blocks: unknown[];
  event: { id: string; kind: string; fields: Record<string, string> };
}

/** A webhook receiver that answers 500 to the first delivery of each id, 200 after. */
async function startReceiver(): Promise<{ url: string; deliveries: Delivery[]; close(): Promise<void> }> {
  const deliveries: Delivery[] = [];
  const seen = new Set<string>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const id = String(req.headers['idempotency-key']);
      const status = seen.has(id) ? 200 : 500;
      seen.add(id);
      deliveries.push({ headers: req.headers, body, status });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/import`,
    deliveries,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('failure notifications to a webhook', () => {
  let stack: FullStack;
  let workers: WorkerPool;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const dir = mkdtempSync(join(tmpdir(), 'notify-test-'));
  const secretFile = join(dir, 'webhook-secret');
  const secret = `whsec-${randomUUID()}`;

  beforeAll(async () => {
    writeFileSync(secretFile, `${secret}\n`);
    receiver = await startReceiver();
    stack = await startFullStack({ bucket: 'notify', name: 'notify' });
    workers = workerPool(stack);
    await workers.start({ env: { NOTIFY_WEBHOOK_URL: receiver.url, NOTIFY_WEBHOOK_SECRET_FILE: secretFile } });
  }, 180_000);

  afterAll(async () => {
    await workers?.close();
    await stack?.close();
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = (extra: Partial<ImportFileInput> = {}) => {
    const workflowId = `notify-${randomUUID()}`;
    return stack.env.client.workflow.start<typeof importFile>('importFile', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [
        {
          source: { bucket: stack.bucket, key: 'missing.csv' },
          dataImportName: `Notify ${workflowId}`,
          entityType: 'Account',
          listAction: 'insert',
          ...extra,
        },
      ],
    });
  };

  const deliveriesOf = (workflowId: string) =>
    receiver.deliveries.filter((d) => (JSON.parse(d.body) as Event).event.fields.workflowId === workflowId);

  it('sends a failed import once, again after a 500 with the same id, signed and secret-free', async () => {
    const handle = await start();
    await expect(handle.result()).rejects.toBeInstanceOf(WorkflowFailedError);
    const deliveries = deliveriesOf(handle.workflowId);
    expect(deliveries.map((d) => d.status)).toEqual([500, 200]);
    const events = deliveries.map((d) => JSON.parse(d.body) as Event);
    const ids = new Set(events.map((e) => e.event.id));
    expect([...ids]).toEqual([`${handle.workflowId}/${events[0]!.event.fields.runId}/import-failed`]);
    expect(deliveries.map((d) => d.headers['idempotency-key'])).toEqual([...ids, ...ids]);
    expect(events[0]!.event.kind).toBe('import-failed');
    expect(events[0]!.text).toContain(`Import ${handle.workflowId} failed: inspectSource failed`);
    expect(events[0]!.event.fields).toMatchObject({ step: 'inspectSource', file: 's3://notify/missing.csv' });
    for (const d of deliveries) {
      expect(d.headers[SIGNATURE_HEADER]).toBe(signatureOf(d.body, secret));
      expect(d.body).not.toContain(secret);
      expect(d.body).not.toContain(DEMO_TOKENS.importer);
    }
  }, 120_000);

  it('sends an import waiting for an operator once, with what to do', async () => {
    const handle = await start({ onFailure: 'await-retry' });
    for (;;) {
      if ((await handle.query(progressQuery)).awaitingRetry && deliveriesOf(handle.workflowId).length >= 2) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await handle.signal(abandonSignal);
    await expect(handle.result()).rejects.toBeInstanceOf(WorkflowFailedError);
    const events = deliveriesOf(handle.workflowId).map((d) => JSON.parse(d.body) as Event);
    // Abandoned by the operator: no "failed" notification follows the wait's.
    expect(events.map((e) => e.event.kind)).toEqual(['import-awaiting-operator', 'import-awaiting-operator']);
    expect(new Set(events.map((e) => e.event.id)).size).toBe(1);
    expect(events[0]!.event.id).toMatch(/\/import-awaiting-operator\/1$/);
    expect(events[0]!.text).toContain('`retry` or `abandon`');
  }, 120_000);
});
