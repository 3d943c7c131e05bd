/**
 * The chaos soak (`npm run soak -- --seed 7 --minutes 3`): a real Temporal dev
 * server (killed and restarted on its database mid-run), compiled worker
 * processes behind cuttable proxies (SIGKILLed, SIGSTOPped, cut off), the
 * simulator with random faults in its lenient mode, s3rver behind a proxy
 * that cuts GETs, and imports started by the CLI, the plain Temporal client
 * and the nightly schedule. After a settle it judges from the simulator's
 * record and Temporal's (checks.ts), prints one summary line and the
 * details of each violation, and exits 1 on any violation.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { seededRandom } from '../simulator/chaos.js';
import { lockDist } from '../support/dist-lock.js';
import { parseSoakArgs, USAGE } from './args.js';
import { CHECKS, judge, type Violation } from './checks.js';
import {
  pickSize,
  putObject,
  SOAK_MAX_PART_BYTES,
  type SoakFile,
  type SoakFileKind,
  type SoakObject,
  soakFile,
} from './objects.js';
import { type Event, planSoak } from './plan.js';
import { settle, settleBoundMs } from './settle.js';
import { BUCKET, FEED_ID, SOAK_TIMINGS, type Stack, startStack } from './stack.js';
import { createStarters, type Starters } from './starters.js';
import { readExecutions } from './temporal-record.js';
import { ROOT } from './workers.js';

const tally = { kills: 0, stops: 0, cuts: 0, 's3-cuts': 0, 'server-restarts': 0, 'token-rotations': 0 };

/**
 * The workers and the CLI run from a copy of dist/ in the soak's folder, so a
 * build of dist/ during the soak (a test file, a developer) cannot change
 * them. Built (unless --no-build) and copied under the dist/ lock.
 */
async function snapshotDist(build: boolean, dir: string): Promise<string> {
  const unlock = await lockDist(ROOT);
  try {
    if (build) {
      log('npm run build');
      execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    }
    const compiled = join(dir, 'dist');
    cpSync(join(ROOT, 'dist'), compiled, { recursive: true });
    return compiled;
  } finally {
    unlock();
  }
}

function log(line: string): void {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} soak: ${line}\n`);
}

async function main(): Promise<number> {
  let args: ReturnType<typeof parseSoakArgs>;
  try {
    args = parseSoakArgs(process.argv.slice(2));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const periodMs = args.minutes * 60_000;
  const settleMs = settleBoundMs(SOAK_TIMINGS);
  // Everything is bounded: past this the soak gives up and says so. The settle pushes it on while imports end.
  const watchdog = createWatchdog(args.seed);
  watchdog.arm(periodMs + settleMs + 8 * 60_000);

  const dir = join(ROOT, 'test-artifacts', 'soak', `seed-${args.seed}-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  const compiled = await snapshotDist(args.build, dir);
  const random = seededRandom(args.seed);
  const plan = planSoak(random, periodMs, args.workers, args.seed);
  log(
    `${plan.objects.length} objects, ${plan.events.length} events, small limits: ${plan.smallLimits}; artifacts in ${dir}`,
  );
  const stack = await startStack({
    seed: args.seed,
    workers: args.workers,
    dir,
    compiled,
    smallLimits: plan.smallLimits,
    imports: plan.objects.length,
  });
  try {
    const starters = createStarters(stack.client, stack.cliEnv, join(dir, 'cli.log'), stack.compiled);
    // Side by side: none of the three needs another (only makeObjects draws on the seed).
    const [applied, objects] = await Promise.all([
      starters.applySchedules(),
      makeObjects(stack, plan.objects, args.seed, random),
      stack.workersReady,
    ]);
    if (applied !== 'started') throw new Error('schedules apply failed; see cli.log');
    await runChaos(stack, starters, objects, plan.events, periodMs);
    log(`chaos over; settling until every import has ended, for at most ${Math.round(settleMs / 1000)} s`);
    const settledMs = await settle(stack, settleMs, log, () => watchdog.arm(settleMs + 8 * 60_000));
    log(`settled after ${Math.round(settledMs / 1000)} s`);
    const violations = await verdict(
      stack,
      [...objects.values()].map((o) => o.object),
      dir,
    );
    const imports = await importCount(stack);
    report(args, imports, violations);
    return violations.length === 0 ? 0 : 1;
  } finally {
    await stack.close().catch((e: unknown) => log(`cleanup: ${(e as Error).message}`));
    watchdog.disarm();
  }
}

interface PlannedObject {
  object: SoakObject;
  file: SoakFile;
  nightly: boolean;
}

/**
 * The manual imports' files in turn: one split into several jobs (over the
 * part limit), one gzip, one `;`-delimited Windows-1252, one in the service's
 * form with a refused row (skipped), then four already in the service's form.
 * The nightly's files are in the service's form.
 */
const MANUAL_KINDS: (SoakFileKind | 'split')[] = [
  'split',
  'gzip',
  'semicolon-1252',
  'refused-row',
  'plain',
  'plain',
  'plain',
  'plain',
];

/** The files, made up front (their S3 upload waits for their start). */
async function makeObjects(
  stack: Stack,
  planned: { nightly: boolean }[],
  seed: number,
  random: () => number,
): Promise<Map<number, PlannedObject>> {
  const out = new Map<number, PlannedObject>();
  let manual = 0;
  for (const [i, p] of planned.entries()) {
    const key = p.nightly ? `nightly/${seed}-${i}.csv` : `manual/${seed}-${i}.csv`;
    const drawn = pickSize(random);
    const kind = p.nightly ? 'plain' : MANUAL_KINDS[manual++ % MANUAL_KINDS.length]!;
    const file =
      kind === 'split'
        ? soakFile('plain', `${seed}-${i}`, Math.max(drawn, 1.5 * SOAK_MAX_PART_BYTES))
        : soakFile(kind, `${seed}-${i}`, drawn);
    const name = p.nightly ? `nightly ${FEED_ID}: ${key}` : `soak ${seed}-${i}`;
    // The ETag is known once stored; the object goes to S3 now, invisible to the feed's prefix until its night.
    const stored = p.nightly ? undefined : await putObject(stack.s3.client, BUCKET, key, file, name);
    out.set(i, {
      object: stored ?? {
        bucket: BUCKET,
        key,
        etag: '',
        bytes: file.body.length,
        sha256: '',
        name,
        bodies: file.bodies,
      },
      file,
      nightly: p.nightly,
    });
  }
  return out;
}

async function runChaos(
  stack: Stack,
  starters: Starters,
  objects: Map<number, PlannedObject>,
  events: Event[],
  periodMs: number,
): Promise<void> {
  const healed = new AbortController();
  const tasks: Promise<void>[] = [];
  const began = Date.now();
  for (const event of events) {
    const wait = began + event.at - Date.now();
    if (wait > 0) await sleep(wait);
    tasks.push(
      runEvent(stack, starters, objects, event, healed.signal).catch((e: unknown) =>
        log(`event ${event.kind} failed: ${(e as Error).message}`),
      ),
    );
  }
  const rest = began + periodMs - Date.now();
  if (rest > 0) await sleep(rest);
  log(
    `healing: thaw, restore, restart, faults off; the simulator's faults struck ${JSON.stringify(stack.sim.chaosCounts())}`,
  );
  healed.abort();
  stack.sim.setChaos(undefined);
  for (const w of stack.workers) {
    w.thaw();
    w.proxy.restore();
  }
  await Promise.all(stack.workers.map((w) => w.start()));
  // Imports still starting (a CLI retrying past a server restart) finish within their own bounds, and a
  // night still waiting for the one before it is triggered: the settle must see everything that starts.
  await Promise.allSettled(tasks);
}

async function runEvent(
  stack: Stack,
  starters: Starters,
  objects: Map<number, PlannedObject>,
  event: Event,
  healed: AbortSignal,
): Promise<void> {
  const hold = (ms: number) => sleep(ms, undefined, { signal: healed }).catch(() => undefined);
  switch (event.kind) {
    case 'import': {
      const o = objects.get(event.object) as PlannedObject;
      const outcome = event.via === 'cli' ? await starters.viaCli(o.object) : await starters.viaClient(o.object);
      log(`import ${o.object.key} (${o.object.bytes} B) via ${event.via}: ${outcome}`);
      return;
    }
    case 'import-again': {
      const o = objects.get(event.object) as PlannedObject;
      log(`import ${o.object.key} again via cli: ${await starters.viaCli(o.object)}`);
      return;
    }
    case 'nightly': {
      for (const i of event.objects) {
        const o = objects.get(i) as PlannedObject;
        o.object = await putObject(stack.s3.client, BUCKET, o.object.key, o.file, o.object.name);
      }
      // The schedule skips a trigger while a night runs (its next night would import these): wait for it.
      if (await nightRunning(stack)) {
        log('nightly waits for the night before it to end');
        while (await nightRunning(stack)) await sleep(5_000);
      }
      const triggeredAt = new Date();
      const outcome = await starters.triggerNightly(FEED_ID);
      log(`nightly with ${event.objects.length} new objects: ${outcome}`);
      // The schedule starts the night a moment after the trigger: the settle must not look before it is there.
      if (outcome === 'started') await nightStartedSince(stack, triggeredAt);
      return;
    }
    case 'kill': {
      const w = stack.workers[event.worker];
      if (!w?.running) return;
      tally.kills += 1;
      log(`SIGKILL worker ${w.index}, restart in ${event.downMs} ms`);
      await w.kill();
      await hold(event.downMs);
      await w.start();
      return;
    }
    case 'freeze': {
      const w = stack.workers[event.worker];
      if (!w?.running || w.stopped) return;
      tally.stops += 1;
      log(`SIGSTOP worker ${w.index} for ${event.forMs} ms`);
      w.freeze();
      await hold(event.forMs);
      w.thaw();
      return;
    }
    case 'cut': {
      const w = stack.workers[event.worker];
      if (!w || w.proxy.isCut) return;
      tally.cuts += 1;
      log(`cut worker ${w.index} off Temporal for ${event.forMs} ms`);
      w.proxy.cut();
      await hold(event.forMs);
      w.proxy.restore();
      return;
    }
    case 's3-cut':
      tally['s3-cuts'] += 1;
      stack.s3Proxy.cutNextGetAfter(event.afterBytes);
      return;
    case 'server-restart':
      tally['server-restarts'] += 1;
      log(`SIGKILL the Temporal dev server, restart in ${event.downMs} ms`);
      await stack.server.restart(event.downMs);
      log('Temporal dev server back');
      return;
    case 'rotate-token':
      tally['token-rotations'] += 1;
      log('rotating the service token (the old one answers 401)');
      await stack.rotateToken();
      return;
  }
}

async function nightRunning(stack: Stack): Promise<boolean> {
  const query = 'ExecutionStatus="Running" AND WorkflowType="nightlyImport"';
  try {
    for await (const _ of stack.client().workflow.list({ query })) return true;
    return false;
  } catch {
    // The server may be restarting: look again.
    return true;
  }
}

/** Until a night started at or after `since` is listed (at most 2 minutes: the server may be restarting). */
async function nightStartedSince(stack: Stack, since: Date): Promise<void> {
  // Visibility keeps seconds: a night started within the trigger's second counts.
  const from = new Date(Math.floor(since.getTime() / 1000) * 1000 - 1000).toISOString();
  const query = `WorkflowType="nightlyImport" AND StartTime >= "${from}"`;
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    try {
      for await (const _ of stack.client().workflow.list({ query })) return;
    } catch {
      // The server may be restarting: look again.
    }
    await sleep(1_000);
  }
  log('nightly: no night started within 2 minutes of its trigger');
}

/** Exits with 3 when not pushed on in time. */
function createWatchdog(seed: number) {
  let timer: NodeJS.Timeout | undefined;
  const started = Date.now();
  return {
    arm(ms: number) {
      clearTimeout(timer);
      timer = setTimeout(() => {
        console.error(`soak seed=${seed}: watchdog expired after ${Math.round((Date.now() - started) / 60_000)} min`);
        process.exit(3);
      }, ms);
      timer.unref();
    },
    disarm() {
      clearTimeout(timer);
    },
  };
}

async function verdict(stack: Stack, objects: SoakObject[], dir: string): Promise<Violation[]> {
  // The simulator's record beside the logs, for whoever reads a violation's details.
  const sim = { jobs: stack.sim.jobs(), record: stack.sim.record(), requests: stack.sim.requests(), objects };
  writeFileSync(join(dir, 'simulator.json'), JSON.stringify(sim, null, 1));
  const logs = new Map<string, string>();
  for (const file of readdirSync(dir)) {
    if (file.endsWith('.log')) logs.set(file, readFileSync(join(dir, file), 'utf8'));
  }
  return judge({
    objects: objects.filter((o) => o.etag !== ''),
    jobs: stack.sim.jobs(),
    record: stack.sim.record(),
    counters: stack.sim.counters(),
    limits: stack.limits,
    executions: await readExecutions(stack.client()),
    logs,
    tokens: stack.tokens,
  });
}

async function importCount(stack: Stack): Promise<number> {
  const ids = new Set<string>();
  for await (const info of stack.client().workflow.list({ query: 'WorkflowType="importFile"' }))
    ids.add(info.workflowId);
  return ids.size;
}

function report(args: { seed: number; minutes: number }, imports: number, violations: Violation[]): void {
  const count = (check: string) => violations.filter((v) => v.check === check).length;
  const faults = `kills=${tally.kills} stops=${tally.stops} cuts=${tally.cuts} s3-cuts=${tally['s3-cuts']} server-restarts=${tally['server-restarts']} token-rotations=${tally['token-rotations']}`;
  const checks = CHECKS.map((c) => `${c}=${count(c)}`).join(' ');
  console.log(
    `soak seed=${args.seed} minutes=${args.minutes} imports=${imports} ${faults} | ${checks} | ${violations.length ? 'FAIL' : 'PASS'}`,
  );
  for (const v of violations) console.log(`  ${v.check}: ${v.detail}`);
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`soak: ${(error as Error).stack ?? error}`);
    process.exit(3);
  },
);
