/** `npm run soak -- --seed N --minutes M [--workers W] [--no-build]`. */
import { parseArgs } from 'node:util';

export interface SoakArgs {
  seed: number;
  minutes: number;
  workers: number;
  build: boolean;
}

export const USAGE = `Usage: npm run soak -- [--seed N] [--minutes M] [--workers W] [--no-build]
  --seed      seeds every random choice: files, start times, faults (default 1)
  --minutes   length of the chaos period, before the settle (default 3; 30 is the long run)
  --workers   compiled worker processes (default 3)
  --no-build  copy dist/ as it is instead of running npm run build first`;

export function parseSoakArgs(argv: string[]): SoakArgs {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      seed: { type: 'string' },
      minutes: { type: 'string' },
      workers: { type: 'string' },
      'no-build': { type: 'boolean' },
    },
  });
  return {
    seed: whole('--seed', values.seed ?? '1', 0, 2 ** 31),
    minutes: positive('--minutes', values.minutes ?? '3', 240),
    workers: whole('--workers', values.workers ?? '3', 1, 8),
    build: !values['no-build'],
  };
}

function whole(flag: string, raw: string, min: number, max: number): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > max)
    throw new Error(`${flag} must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return n;
}

function positive(flag: string, raw: string, max: number): number {
  const n = Number(raw);
  if (!(n > 0 && n <= max))
    throw new Error(`${flag} must be a number above 0 and at most ${max}, got ${JSON.stringify(raw)}`);
  return n;
}
