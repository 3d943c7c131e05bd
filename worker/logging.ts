/**
 * The process logger, installed as the Temporal runtime logger so the SDK's
 * own lines, activity context loggers and ours come out in one format: JSON
 * lines when stderr is not a terminal (log shippers), readable text when it is.
 */
import { DefaultLogger, type LogEntry } from '@temporalio/worker';
import type { LogLevel } from '../temporal.config.js';

function writeJson(entry: LogEntry): void {
  const { level, message, meta, timestampNanos } = entry;
  const time = new Date(Number(timestampNanos / 1_000_000n)).toISOString();
  process.stderr.write(`${JSON.stringify({ time, level, message, ...meta })}\n`);
}

function writeText(entry: LogEntry): void {
  const time = new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString();
  const meta = entry.meta && Object.keys(entry.meta).length > 0 ? ` ${JSON.stringify(entry.meta)}` : '';
  process.stderr.write(`${time} ${entry.level.padEnd(5)} ${entry.message}${meta}\n`);
}

export function createLogger(level: LogLevel, json = !process.stderr.isTTY): DefaultLogger {
  return new DefaultLogger(level, json ? writeJson : writeText);
}

/**
 * The last line of a worker that cannot go on: the bare message on a
 * terminal, a JSON line (level FATAL) for a log shipper otherwise.
 */
export function writeFatal(message: string, json = !process.stderr.isTTY): void {
  const line = json ? JSON.stringify({ time: new Date().toISOString(), level: 'FATAL', message }) : message;
  process.stderr.write(`${line}\n`);
}
