/**
 * The container image without a container engine (none runs on these
 * machines): the Dockerfile's `build` and `runtime` stages are carried out in
 * clean temporary folders, step by step as the Dockerfile says (its COPYs
 * from the checkout, its RUN commands), and the compiled worker is started
 * from the runtime folder as the image's CMD, with the image's HEALTHCHECK
 * command run against it and /readyz asked on a real Temporal dev server.
 *
 * One step is not repeated: the build stage's full `npm ci`, which is CI's
 * own first step on the same package-lock.json; that stage links the
 * checkout's node_modules instead (the lock files are checked equal). The
 * runtime stage's `npm ci --omit=dev` runs for real, so the image holds
 * production dependencies only and the worker must start on them alone.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../worker/demo/free-port.js';
import { findTemporalBinary } from '../../worker/demo/temporal-binaries.js';
import { ROOT, readDockerfile, type Stage, stageNamed } from './dockerfile.js';

const stages = readDockerfile();
const work = mkdtempSync(join(tmpdir(), 'image-build-'));
/** Each emulated stage's folder, standing for its WORKDIR. */
const folders = new Map<string, string>();

function isFullInstall(command: string): boolean {
  return /^npm ci(\s|$)/.test(command) && !command.includes('--omit=dev');
}

/** Docker's COPY: several sources (or a destination ending in /) go into the folder; one source becomes it. */
function copy(sources: string[], destination: string, from: (source: string) => string, into: string): void {
  const target = resolve(into, destination);
  const intoFolder = sources.length > 1 || destination.endsWith('/');
  for (const source of sources) {
    cpSync(from(source), intoFolder ? join(target, basename(source)) : target, { recursive: true });
  }
}

/** Carries out one stage's steps in a new folder, as an image build would. */
function buildStage(stage: Stage): string {
  const folder = join(work, stage.name);
  mkdirSync(folder, { recursive: true });
  for (const step of stage.steps) {
    if (step.kind === 'copy') {
      const fromStage = step.from;
      const origin = fromStage
        ? (source: string) => {
            const other = stageNamed(stages, fromStage);
            const otherFolder = folders.get(fromStage);
            if (!otherFolder) throw new Error(`stage ${fromStage} was not built before ${stage.name}`);
            return join(otherFolder, relative(other.workdir ?? '/', source));
          }
        : (source: string) => resolve(ROOT, source);
      copy(step.sources, step.destination, origin, folder);
      continue;
    }
    if (isFullInstall(step.command)) {
      expect(readFileSync(join(folder, 'package-lock.json'), 'utf8')).toBe(
        readFileSync(join(ROOT, 'package-lock.json'), 'utf8'),
      );
      symlinkSync(join(ROOT, 'node_modules'), join(folder, 'node_modules'), 'dir');
      continue;
    }
    const run = spawnSync('sh', ['-c', step.command], {
      cwd: folder,
      env: { ...process.env, ...stage.env },
      encoding: 'utf8',
    });
    if (run.status !== 0) throw new Error(`RUN ${step.command} failed (${run.status}):\n${run.stdout}${run.stderr}`);
  }
  folders.set(stage.name, folder);
  return folder;
}

interface Answer {
  status: number;
  body: { ready?: boolean; checks?: Record<string, { ok: boolean; detail: string }> };
}

async function until(url: string, accept: (a: Answer) => boolean): Promise<Answer> {
  for (;;) {
    const answer = await fetch(url).then(
      async (res) => ({ status: res.status, body: (await res.json()) as Answer['body'] }),
      () => undefined,
    );
    if (answer && accept(answer)) return answer;
    await new Promise((done) => setTimeout(done, 250));
  }
}

describe('the image, built step by step in a clean folder', () => {
  const runtime = stageNamed(stages, 'runtime');
  const started: ChildProcess[] = [];
  let app: string;

  beforeAll(() => {
    buildStage(stageNamed(stages, 'build'));
    app = buildStage(runtime);
  }, 600_000);

  afterAll(() => {
    for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(work, { recursive: true, force: true });
  });

  it('holds the compiled worker, its workflow bundle and the bin, with production dependencies only', () => {
    for (const file of ['dist/worker/process/main.js', 'dist/workflow-bundle.js', 'bin/import-worker.js']) {
      expect(existsSync(join(app, file)), file).toBe(true);
    }
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean; optional?: boolean }>;
    };
    const installed = (path: string) => existsSync(join(app, path));
    const devOnly = Object.entries(lock.packages).filter(([path, entry]) => path !== '' && entry.dev);
    expect(devOnly.length).toBeGreaterThan(0);
    expect(devOnly.map(([path]) => path).filter(installed)).toEqual([]);
    // Optional ones are other platforms' native builds: installed only where they run.
    const production = Object.entries(lock.packages).filter(
      ([path, entry]) => path !== '' && !entry.dev && !entry.optional,
    );
    expect(production.map(([path]) => path).filter((path) => !installed(path))).toEqual([]);
    expect(existsSync(join(app, 'test'))).toBe(false);
  });

  it('starts as its CMD, passes its HEALTHCHECK, and is ready on a real Temporal dev server', {
    timeout: 180_000,
  }, async () => {
    const binary = findTemporalBinary('dev-server');
    if (!binary) throw new Error('no Temporal dev server binary; run npm run setup:temporal');
    const [temporalPort, healthPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
    const server = spawn(
      binary.path,
      ['server', 'start-dev', '--headless', '--port', String(temporalPort), '--log-level', 'error'],
      { stdio: 'ignore' },
    );
    started.push(server);
    const tokenFile = join(work, 'token');
    writeFileSync(tokenFile, 'image-build-test-token\n');
    const [command = '', ...args] = runtime.cmd ?? [];
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...runtime.env,
      TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}`,
      COMPANY_DATA_BASE_URL: 'http://127.0.0.1:9',
      COMPANY_DATA_TOKEN_FILE: tokenFile,
      WORKER_HEALTH_PORT: String(healthPort),
      WORKER_METRICS_PORT: String(metricsPort),
    };
    expect(command).toBe('node');
    let output = '';
    const worker = spawn(process.execPath, args, { cwd: app, env });
    started.push(worker);
    worker.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });

    const ready = await until(`http://127.0.0.1:${healthPort}/readyz`, (a) => a.status === 200);
    expect(ready.body.ready).toBe(true);
    expect(output).toContain(`"workflows":"bundle ${join(app, 'dist/workflow-bundle.js')}"`);

    const [checkCommand = '', ...checkArgs] = runtime.healthcheck?.command ?? [];
    expect(checkCommand).toBe('node');
    const check = spawnSync(process.execPath, checkArgs, { cwd: app, env, encoding: 'utf8' });
    expect(check.status).toBe(0);

    const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(metrics.status).toBe(200);

    const exited = new Promise<number | null>((done) => worker.on('exit', done));
    worker.kill('SIGTERM');
    expect(await exited).toBe(0);
    // With the worker gone, the image's health check fails, as a container engine would see it.
    expect(spawnSync(process.execPath, checkArgs, { cwd: app, env }).status).toBe(1);
  });
});
