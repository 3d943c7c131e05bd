/** Command-line flags of the standalone simulator (`npm run simulator -- --port 8089`). */
import { parseArgs } from 'node:util';

export const USAGE = `Usage: npm run simulator -- [--port N] [--host ADDR] [--processing-ms N] [--reset-utc HH:MM]
  --port           TCP port to listen on (default 8089; 0 picks a free one)
  --host           address to bind (default 127.0.0.1)
  --processing-ms  time from an accepted upload to completed/failed (default 200)
  --reset-utc      daily request-counter reset, UTC time of day HH:MM (default 00:00)
  --history        completed jobs the tenant's history holds at the start (default 0)
  --help           print this help`;

interface MainArgs {
  help: boolean;
  port: number;
  host: string;
  processingMs: number;
  resetMinuteUtc: number;
  completedHistory: number;
}

/** Parses the flags; throws an Error whose message is one line naming the bad flag and what it expects. */
export function parseMainArgs(argv: string[]): MainArgs {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'processing-ms': { type: 'string' },
      'reset-utc': { type: 'string' },
      history: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  return {
    help: values.help ?? false,
    port: integerFlag('--port', values.port ?? '8089', 0, 65_535),
    host: values.host ?? '127.0.0.1',
    processingMs: integerFlag('--processing-ms', values['processing-ms'] ?? '200', 0, 86_400_000),
    resetMinuteUtc: resetFlag(values['reset-utc'] ?? '00:00'),
    completedHistory: integerFlag('--history', values.history ?? '0', 0, 1_000_000),
  };
}

function integerFlag(flag: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new Error(`${flag} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

function resetFlag(raw: string): number {
  const match = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(raw);
  if (!match)
    throw new Error(`--reset-utc must be a UTC time of day HH:MM (00:00 to 23:59), got ${JSON.stringify(raw)}`);
  return Number(match[1]) * 60 + Number(match[2]);
}
