/**
 * The `notify` activity: posts a workflow's notification to the operator's
 * webhook as Slack-compatible JSON (`text` for a chat, `blocks` with the
 * facts, and the event itself under `event` for a program). It is an activity
 * so that Temporal retries it: a notification arrives at least once, and a
 * receiver drops repeats by the id in the body and the `Idempotency-Key`
 * header. With a shared secret, `X-Signature-256: sha256=<hex>` carries the
 * HMAC-SHA256 of the exact body, so a receiver can tell the worker sent it.
 * The secret is read from its file at every send (so it can be rotated) and
 * never sent; the URL (a Slack URL is itself a secret) is never logged or
 * put into an error.
 */
import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ApplicationFailure } from '@temporalio/common';
import type { NotificationInput } from '../../workflows/contracts/notification.js';

export interface WebhookSettings {
  url: string;
  /** A file holding the shared secret that signs each body; none: unsigned. */
  secretFile?: string;
  timeoutMs: number;
}

export const SIGNATURE_HEADER = 'x-signature-256';

/** The body a receiver gets: what Slack shows, and the event for anything else. */
export function webhookBody(input: NotificationInput): string {
  const facts = Object.entries(input.fields).map(([name, value]) => ({ type: 'mrkdwn', text: `*${name}*\n${value}` }));
  return JSON.stringify({
    text: input.text,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: input.text } },
      ...(facts.length > 0 ? [{ type: 'section', fields: facts.slice(0, 10) }] : []),
    ],
    event: { id: input.id, kind: input.kind, fields: input.fields },
  });
}

export function signatureOf(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Off (answers at once) when no webhook is configured, so workflows need not know. */
export function makeNotify(settings: WebhookSettings | undefined) {
  return async function notify(input: NotificationInput): Promise<void> {
    if (!settings) return;
    const body = webhookBody(input);
    const headers: Record<string, string> = { 'content-type': 'application/json', 'idempotency-key': input.id };
    if (settings.secretFile) headers[SIGNATURE_HEADER] = signatureOf(body, await readSecret(settings.secretFile));
    let res: Response;
    try {
      res = await fetch(settings.url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(settings.timeoutMs),
      });
    } catch (err) {
      // The message may name the URL: only the cause's code (ECONNREFUSED, a timeout) goes into the failure.
      const reason = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
      throw ApplicationFailure.retryable(`the webhook could not be reached (${reason})`, 'WebhookUnreachable');
    }
    await res.body?.cancel();
    if (res.ok) return;
    const message = `the webhook answered ${res.status}`;
    // A refusal other than "too many" or a server error will be refused again unchanged.
    if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) {
      throw ApplicationFailure.nonRetryable(message, 'WebhookRefused');
    }
    throw ApplicationFailure.retryable(message, 'WebhookFailed');
  };
}

async function readSecret(path: string): Promise<string> {
  let secret: string;
  try {
    secret = (await readFile(path, 'utf8')).trim();
  } catch (err) {
    throw ApplicationFailure.retryable(
      `the webhook secret file ${path} cannot be read (${(err as NodeJS.ErrnoException).code})`,
      'WebhookSecretUnreadable',
    );
  }
  if (secret === '')
    throw ApplicationFailure.retryable(`the webhook secret file ${path} is empty`, 'WebhookSecretUnreadable');
  return secret;
}
