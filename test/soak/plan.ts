/**
 * The run's timeline, decided up front from the seed: when each import
 * starts and how, when the nightly runs, and when which worker is killed,
 * frozen or cut off, when S3 cuts a GET, when the dev server restarts and
 * when the token rotates. The timeline is repeatable; the interleaving of
 * real processes around it is not, exactly.
 */
export type Event =
  | { at: number; kind: 'import'; via: 'cli' | 'client'; object: number }
  | { at: number; kind: 'import-again'; object: number }
  | { at: number; kind: 'nightly'; objects: number[] }
  | { at: number; kind: 'kill'; worker: number; downMs: number }
  | { at: number; kind: 'freeze'; worker: number; forMs: number }
  | { at: number; kind: 'cut'; worker: number; forMs: number }
  | { at: number; kind: 's3-cut'; afterBytes: number }
  | { at: number; kind: 'server-restart'; downMs: number }
  | { at: number; kind: 'rotate-token' };

export interface SoakPlan {
  /** Objects to create: index -> whether the nightly feed imports it. */
  objects: { nightly: boolean }[];
  events: Event[];
  smallLimits: boolean;
}

/** Every third seed (seed % 3 === 2) runs with small daily limits. */
export function planSoak(random: () => number, periodMs: number, workers: number, seed: number): SoakPlan {
  const smallLimits = seed % 3 === 2;
  const between = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo));
  const imports = Math.max(6, Math.round((periodMs / 60_000) * 10));
  const objects: { nightly: boolean }[] = [];
  const events: Event[] = [];
  const nightly = [[], []] as number[][];
  for (let i = 0; i < imports; i++) {
    const isNightly = random() < 0.3;
    objects.push({ nightly: isNightly });
    if (isNightly) nightly[random() < 0.5 ? 0 : 1]?.push(i);
    else
      events.push({
        at: between(0, periodMs * 0.8),
        kind: 'import',
        via: random() < 0.5 ? 'cli' : 'client',
        object: i,
      });
  }
  events.push({ at: Math.round(periodMs * 0.15), kind: 'nightly', objects: nightly[0] ?? [] });
  events.push({ at: Math.round(periodMs * 0.6), kind: 'nightly', objects: nightly[1] ?? [] });
  // One version started again by hand while, or after, a night imports it: it must not be imported twice.
  const again = nightly[0]?.[0];
  if (again !== undefined) events.push({ at: Math.round(periodMs * 0.3), kind: 'import-again', object: again });
  // Each round of four faults holds one of each kind, in a seeded order: no kind is left out by chance.
  let round: string[] = [];
  for (let at = between(8_000, 15_000); at < periodMs; at += between(8_000, 20_000)) {
    if (round.length === 0) round = shuffled(['kill', 'freeze', 'cut', 's3-cut'], random);
    const kind = round.pop();
    const worker = between(0, workers);
    if (kind === 'kill') events.push({ at, kind, worker, downMs: between(1_000, 8_000) });
    else if (kind === 'freeze') events.push({ at, kind, worker, forMs: between(10_000, 80_000) });
    else if (kind === 'cut') events.push({ at, kind, worker, forMs: between(10_000, 90_000) });
    else events.push({ at, kind: 's3-cut', afterBytes: between(0, 1_000_000) });
  }
  events.push({ at: between(periodMs * 0.35, periodMs * 0.65), kind: 'server-restart', downMs: between(2_000, 6_000) });
  events.push({ at: between(periodMs * 0.3, periodMs * 0.7), kind: 'rotate-token' });
  events.sort((a, b) => a.at - b.at);
  return { objects, events, smallLimits };
}

function shuffled<T>(items: T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
