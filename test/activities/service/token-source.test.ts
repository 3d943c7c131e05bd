import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenSourceError } from '../../../activities/service/bearer-token.js';
import { ServiceClient } from '../../../activities/service/client.js';
import { Unauthorized } from '../../../activities/service/errors.js';
import { createTokenSource } from '../../../activities/service/token-source.js';
import { Secret } from '../../../temporal.config.js';
import { DEMO_TOKENS, type Simulator, startSimulator } from '../../simulator/server.js';
import { rejectionOf } from './helpers.js';

describe('token source', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'token-source-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('an env token is returned trimmed, version 1', async () => {
    const source = createTokenSource({ kind: 'env', token: new Secret('  abc.def  \n') });
    expect(await source.current()).toEqual({ token: 'abc.def', version: 1 });
  });

  it('an env token with a line break is refused without echoing it', () => {
    expect(() => createTokenSource({ kind: 'env', token: new Secret('abc\r\nX-Evil: 1') })).toThrow(
      'COMPANY_DATA_TOKEN must be a bearer token of visible ASCII characters',
    );
  });

  it('a file token is trimmed, and its version moves only when the content changes', async () => {
    const path = join(dir, 'rotating');
    await writeFile(path, 'first-token\n');
    const source = createTokenSource({ kind: 'file', path });
    expect(await source.current()).toEqual({ token: 'first-token', version: 1 });
    expect(await source.current()).toEqual({ token: 'first-token', version: 1 });
    await writeFile(path, 'first-token');
    expect(await source.current()).toEqual({ token: 'first-token', version: 1 });
    await writeFile(path, 'second-token\n');
    expect(await source.current()).toEqual({ token: 'second-token', version: 2 });
  });

  it('an empty file is an error naming the path, and the next call after a rewrite works', async () => {
    const path = join(dir, 'empty');
    await writeFile(path, '  \n');
    const source = createTokenSource({ kind: 'file', path });
    const e = await rejectionOf(source.current());
    expect(e).toBeInstanceOf(TokenSourceError);
    expect((e as Error).message).toBe(`token file ${path} is empty; it must hold the bearer token`);
    await writeFile(path, 'now-filled');
    expect(await source.current()).toEqual({ token: 'now-filled', version: 1 });
  });

  it('a file holding more than one token is refused without echoing its content', async () => {
    const path = join(dir, 'two-lines');
    await writeFile(path, 'secret-one\nsecret-two\n');
    const e = await rejectionOf(createTokenSource({ kind: 'file', path }).current());
    expect((e as Error).message).toBe(`token file ${path} must hold one bearer token of visible ASCII characters`);
  });

  it('a missing file is an error naming the path', async () => {
    const path = join(dir, 'absent');
    const e = await rejectionOf(createTokenSource({ kind: 'file', path }).current());
    expect((e as Error).message).toBe(`token file ${path} cannot be read (ENOENT)`);
  });
});

describe('token rotation through a file, against the simulator', () => {
  let sim: Simulator;
  let dir: string;
  beforeAll(async () => {
    sim = await startSimulator();
    dir = await mkdtemp(join(tmpdir(), 'token-rotation-'));
  });
  afterAll(async () => {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('the next call after the sidecar writes a new token uses it', async () => {
    const path = join(dir, 'token');
    await writeFile(path, `${DEMO_TOKENS.expired}\n`);
    const client = new ServiceClient({ baseUrl: sim.baseUrl, tokens: createTokenSource({ kind: 'file', path }) });
    try {
      const e = await rejectionOf(client.listSources('Account'));
      expect(e).toBeInstanceOf(Unauthorized);
      expect((e as Unauthorized).tokenRotated).toBe(false);
      await writeFile(path, `${DEMO_TOKENS.importer}\n`);
      expect(await client.listSources('Account')).toContain('CSV');
    } finally {
      await client.close();
    }
  });

  it('a 401 answered after the token rotated is sent again, once, with the new token', async () => {
    const path = join(dir, 'token-race');
    await writeFile(path, DEMO_TOKENS.importer);
    const client = new ServiceClient({ baseUrl: sim.baseUrl, tokens: createTokenSource({ kind: 'file', path }) });
    try {
      const job = await client.createJob({ dataImportName: 'rotation race', entityType: 'Account' });
      await writeFile(path, DEMO_TOKENS.expired);
      // The service is slow to answer; the sidecar rotates once the request has arrived.
      sim.delayNext('jobStatus', 2_000);
      const pending = client.getJob(job.id);
      while (!sim.requests().some((r) => r.endpoint === 'jobStatus')) await new Promise((r) => setTimeout(r, 10));
      await writeFile(path, DEMO_TOKENS.importer);
      expect(await pending).toMatchObject({ id: job.id });
      expect(
        sim
          .requests()
          .filter((r) => r.endpoint === 'jobStatus')
          .map((r) => r.status),
      ).toEqual([401, 200]);
    } finally {
      await client.close();
    }
  });
});
