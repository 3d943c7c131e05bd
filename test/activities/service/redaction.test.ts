import { Readable } from 'node:stream';
import { inspect } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { toApplicationFailure } from '../../../activities/failures.js';
import { ServiceClient } from '../../../activities/service/client.js';
import {
  BadRequest,
  Network,
  ServerError,
  Timeout,
  Unauthorized,
  UnusableResponse,
} from '../../../activities/service/errors.js';
import { redact } from '../../../activities/service/redaction.js';
import type { ResponseEvent } from '../../../activities/service/types.js';
import { TOKEN_ECHOES, tokenEchoSpellings } from '../../simulator/auth.js';
import { DEFAULT_TOKENS } from '../../simulator/server.js';
import { closedPort } from '../../support/closed-port.js';
import { fixedToken, type Harness, rejectionOf, startHarness } from './helpers.js';

const SECRET = 'very-secret-token-5f2c9e1d';

/** Every place an error's text can travel: message, stack, each own property, the cause chain, JSON, inspection. */
function everyRendering(e: unknown): string {
  const parts: string[] = [];
  let current: unknown = e;
  for (let depth = 0; current !== undefined && depth < 10; depth++) {
    const err = current as Error & { cause?: unknown };
    parts.push(String(err?.message), String(err?.stack), JSON.stringify(err));
    parts.push(inspect(err, { depth: 10, showHidden: true }));
    for (const key of Object.getOwnPropertyNames(err ?? {})) {
      parts.push(inspect((err as unknown as Record<string, unknown>)[key], { depth: 10, showHidden: true }));
    }
    current = err?.cause;
  }
  return parts.join('\n');
}

describe('the token never appears in what the client throws or reports', () => {
  let h: Harness;
  let client: ServiceClient;
  const events: ResponseEvent[] = [];
  beforeAll(async () => {
    h = await startHarness({ tokens: { ...DEFAULT_TOKENS, [SECRET]: { permissions: ['Import Data'] } } });
    // The default request timeout: only the Timeout case wants a short one (150 ms failed a first, cold request on a busy machine).
    client = h.clientWith({ tokens: fixedToken(SECRET), onResponse: (e) => events.push(e) });
  });
  afterAll(() => h.close());
  beforeEach(() => h.sim.clearFaults());

  it('Unauthorized whose body echoes the Authorization header', async () => {
    h.sim.failNext('listSources', 401, { body: { status: `rejected Authorization: Bearer ${SECRET}` } });
    const e = await rejectionOf(client.listSources('Account'));
    expect(e).toBeInstanceOf(Unauthorized);
    expect((e as Unauthorized).serviceMessage).toBe('rejected Authorization: Bearer [redacted]');
    expect(everyRendering(e)).not.toContain(SECRET);
  });

  it('BadRequest whose {message} echoes the token', async () => {
    h.sim.failNext('jobStatus', 400, { body: { message: `bad token ${SECRET}` } });
    const e = await rejectionOf(client.getJob('1'));
    expect(e).toBeInstanceOf(BadRequest);
    expect(everyRendering(e)).not.toContain(SECRET);
  });

  it('ServerError of an XML body that echoes the token', async () => {
    h.sim.failNext('listJobs', 500, {
      body: `<error><errorMessage>${SECRET}</errorMessage></error>`,
      contentType: 'application/xml',
    });
    const e = await rejectionOf(client.listJobs());
    expect(e).toBeInstanceOf(ServerError);
    expect(everyRendering(e)).not.toContain(SECRET);
  });

  it('UnusableResponse of a 200 that is not JSON and echoes the token', async () => {
    h.sim.failNext('jobStatus', 200, { body: `token=${SECRET}`, contentType: 'text/plain' });
    const e = await rejectionOf(client.getJob('1'));
    expect(e).toBeInstanceOf(UnusableResponse);
    expect(everyRendering(e)).not.toContain(SECRET);
  });

  it('Timeout', async () => {
    const impatient = h.clientWith({
      tokens: fixedToken(SECRET),
      requestTimeoutMs: 150,
      onResponse: (e) => events.push(e),
    });
    h.sim.delayNext('listSources', 1_000);
    const e = await rejectionOf(impatient.listSources('Account'));
    expect(e).toBeInstanceOf(Timeout);
    expect(everyRendering(e)).not.toContain(SECRET);
  });

  it('Network of a dropped connection (undici errors hold the request in their properties)', async () => {
    h.sim.applyThenDrop('createJob');
    const e = await rejectionOf(client.createJob({ dataImportName: 'x', entityType: 'Account' }));
    expect(e).toBeInstanceOf(Network);
    expect(everyRendering(e)).not.toContain(SECRET);
  });

  it('Network of an upload reset midway', async () => {
    const job = await client.createJob({ dataImportName: 'reset', entityType: 'Account' });
    h.sim.resetUploadAfter(1024);
    const data = Buffer.alloc(1024 * 1024, 0x61);
    const e = await rejectionOf(client.submitData(job.id, Readable.from([data]), { contentLength: data.length }));
    expect(e).toBeInstanceOf(Network);
    expect(everyRendering(e)).not.toContain(SECRET);
  });

  it('Network of a refused connection', async () => {
    const refused = new ServiceClient({
      baseUrl: `http://127.0.0.1:${await closedPort()}`,
      tokens: fixedToken(SECRET),
    });
    try {
      const e = await rejectionOf(refused.listSources('Account'));
      expect(e).toBeInstanceOf(Network);
      expect(everyRendering(e)).not.toContain(SECRET);
    } finally {
      await refused.close();
    }
  });

  it('an error undici raises about a malformed header value does not quote it', async () => {
    const bad = h.clientWith({ tokens: fixedToken(`${SECRET}\r\nX-Injected: 1`) });
    const e = await rejectionOf(bad.listSources('Account'));
    expect(e).toBeInstanceOf(Network);
    expect(everyRendering(e)).not.toContain(SECRET);
  });

  it('onResponse events', () => {
    expect(events.length).toBeGreaterThan(0);
    expect(inspect(events, { depth: 10 })).not.toContain(SECRET);
  });
});

/** A token as opaque OAuth servers issue them: base64-ish, so escaping and URL-encoding change it. */
const SYMBOL_TOKEN = 'tok/en+with=symbols/5f2c9e1d';

describe('a refusal that echoes the token escaped, URL-encoded or base64-encoded', () => {
  let h: Harness;
  let client: ServiceClient;
  beforeAll(async () => {
    h = await startHarness();
    client = h.clientWith({ tokens: fixedToken(SYMBOL_TOKEN) });
  });
  afterAll(() => h.close());

  it.each(TOKEN_ECHOES)('a 401 echoing the token %s carries no spelling of it, nor does its failure', async (echo) => {
    h.sim.failNext('listSources', 401, { echoToken: echo });
    const e = await rejectionOf(client.listSources('Account'));
    expect(e).toBeInstanceOf(Unauthorized);
    expect((e as Unauthorized).serviceMessage).toContain('[redacted]');
    const rendered = `${everyRendering(e)}\n${everyRendering(toApplicationFailure(e, 1))}`;
    for (const spelling of tokenEchoSpellings(SYMBOL_TOKEN)) expect(rendered).not.toContain(spelling);
  });
});

describe('redact', () => {
  it('finds a secret spelled with mixed escapes, references and percent-encodings, in any hex case', () => {
    const mixed = 'tok%2fen\\u002Bwith&#61;symbols&#x2F;5f2c9e1d';
    expect(redact(`said ${mixed}.`, [SYMBOL_TOKEN])).toBe('said [redacted].');
  });

  it('finds a secret base64-encoded at any alignment, also in the URL-safe alphabet', () => {
    for (const prefix of ['', 'a', 'ab']) {
      const b64 = Buffer.from(`${prefix}${SYMBOL_TOKEN}!`).toString('base64');
      expect(redact(b64, [SYMBOL_TOKEN])).toContain('[redacted]');
      expect(redact(b64.replace(/\+/g, '-').replace(/\//g, '_'), [SYMBOL_TOKEN])).toContain('[redacted]');
    }
  });

  it('leaves text without the secret, and text when no secret is known, unchanged', () => {
    expect(redact('a plain message', [SYMBOL_TOKEN, ''])).toBe('a plain message');
    expect(redact('a plain message', [])).toBe('a plain message');
  });
});
