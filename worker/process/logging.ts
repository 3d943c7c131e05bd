/**
 * The process logger, installed as the Temporal runtime logger so the SDK's
 * own lines, activity context loggers and ours come out in one format: JSON
 * lines when stderr is not a terminal (log shippers), readable text when it is.
 */
import { DefaultLogger, type LogEntry } from '@temporalio/worker';
import type { LogLevel } from '../../temporal.config.js';

/**
 * The SDK puts the activity's base64 task token (about 200 characters) on every activity log line: it
 * names nothing an operator can use (activityId, workflowId and attempt do) and buries the message.
 */
const OMITTED_ATTRIBUTES = new Set(['taskToken']);

/**
 * Errors in log attributes as their name, failure type and message: JSON.stringify would write `{}`, and
 * the SDK's "Workflow failed" and "Activity failed" lines carry the failure this way. Messages of our
 * failures never hold the token (see activities/service/errors.ts).
 */
function serialisable(meta: LogEntry['meta']): Record<string, unknown> | undefined {
  if (!meta) return undefined;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(meta)) {
    if (OMITTED_ATTRIBUTES.has(key)) continue;
    if (!(value instanceof Error)) {
      out[key] = value;
      continue;
    }
    const type = (value as { type?: unknown }).type;
    const cause = value.cause instanceof Error ? value.cause.message : undefined;
    out[key] = { name: value.name, ...(typeof type === 'string' ? { type } : {}), message: value.message, cause };
  }
  return out;
}

function writeJson(entry: LogEntry): void {
  const { level, message, timestampNanos } = entry;
  const time = new Date(Number(timestampNanos / 1_000_000n)).toISOString();
  process.stderr.write(`${JSON.stringify({ time, level, message, ...serialisable(entry.meta) })}\n`);
}

function writeText(entry: LogEntry): void {
  const time = new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString();
  const fields = serialisable(entry.meta);
  const meta = fields && Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : '';
  process.stderr.write(`${time} ${entry.level.padEnd(5)} ${entry.message}${meta}\n`);
}

/**
 * The SDK warns at every start that a worker registers no workflows: the uploads and polls workers run
 * activities only by design (run-worker.ts), so the line says nothing, and on a terminal it breaks the
 * progress bar.
 */
function isExpectedNotice(entry: LogEntry): boolean {
  return entry.message === 'No workflows registered, not polling for workflow tasks';
}

export function createLogger(level: LogLevel, json = !process.stderr.isTTY): DefaultLogger {
  const write = json ? writeJson : writeText;
  return new DefaultLogger(level, (entry) => {
    if (!isExpectedNotice(entry)) write(entry);
  });
}

/**
 * The last line of a worker that cannot go on: the bare message on a
 * terminal, a JSON line (level FATAL) for a log shipper otherwise.
 */
export function writeFatal(message: string, json = !process.stderr.isTTY): void {
  const line = json ? JSON.stringify({ time: new Date().toISOString(), level: 'FATAL', message }) : message;
  process.stderr.write(`${line}\n`);
}
