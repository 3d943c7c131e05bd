/**
 * Small request/response helpers shared by the simulator's routes: what a
 * route answers (a Reply), JSON bodies, and draining a body nobody needs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * What a route decided to answer. `body: undefined` answers with no body
 * (e.g. 201); a Buffer body is sent as it is. `unanswered`: the socket is gone or must stay silent; `status`
 * is then only what the request log records.
 */
export interface Reply {
  status: number;
  body?: unknown;
  contentType?: string;
  /** Extra response headers, e.g. Retry-After on a 429. */
  headers?: Record<string, string>;
  unanswered?: boolean;
  /** Answer without reading the rest of the request body, then hang up (a lingering close). */
  closeUnread?: boolean;
  /**
   * Send the answer's head and the first half of its body, then reset the
   * connection (a TCP RST over whatever of the request is unread): the status
   * arrives, the rest of the answer never does.
   */
  resetMidAnswer?: boolean;
}

/** How long a hung-up connection still reads what the client sends (nginx's lingering_timeout is 5 s). */
const LINGER_MS = 5_000;

export function json(status: number, body?: unknown): Reply {
  return { status, body };
}

export function unanswered(recordedStatus: number): Reply {
  return { status: recordedStatus, unanswered: true };
}

export function send(res: ServerResponse, reply: Reply): void {
  if (reply.closeUnread) res.once('finish', () => lingeringClose(res));
  if (reply.body === undefined) {
    res.writeHead(reply.status, { ...reply.headers, 'content-length': '0' });
    res.end();
    return;
  }
  const contentType = reply.contentType ?? 'application/json; charset=utf-8';
  const text =
    typeof reply.body === 'string' && !contentType.startsWith('application/json') ? reply.body : jsonText(reply.body);
  const bytes = Buffer.isBuffer(reply.body) ? reply.body : Buffer.from(text, 'utf8');
  res.writeHead(reply.status, {
    ...reply.headers,
    'content-type': contentType,
    'content-length': String(bytes.length),
  });
  if (reply.resetMidAnswer) {
    res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => res.socket?.resetAndDestroy());
    return;
  }
  res.end(bytes);
}

const BIGINT_MARK = '\u0000int64:';

/** JSON.stringify that writes a bigint as a bare JSON number, digit for digit (as the service writes int64 ids). */
function jsonText(body: unknown): string {
  const text = JSON.stringify(body, (_key, value) =>
    typeof value === 'bigint' ? `${BIGINT_MARK}${value.toString()}` : value,
  );
  return text.replace(/"\\u0000int64:(-?\d+)"/g, '$1');
}

/**
 * Reads the whole body, but only up to `limitBytes` of it: JSON bodies of the
 * service are small, and a test must not be able to make the simulator buffer
 * gigabytes. Past the limit the rest is read and discarded so that the answer
 * reaches the client instead of a reset connection.
 */
export async function readSmallBody(
  req: IncomingMessage,
  limitBytes = 1024 * 1024,
): Promise<{ text: string } | { tooLarge: true }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= limitBytes) chunks.push(chunk);
  }
  if (size > limitBytes) return { tooLarge: true };
  return { text: Buffer.concat(chunks).toString('utf8') };
}

/** Reads and discards whatever is left of the body, so an early answer is not lost to a TCP reset. */
export async function drain(req: IncomingMessage): Promise<void> {
  if (req.readableEnded) return;
  for await (const _ of req) {
    // discard
  }
}

/** Parses a JSON body; `undefined` when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Hangs up after an answer sent over a body still flowing in, as web servers
 * do: a FIN after the answer, then the rest of the body read and dropped for
 * a while. Closing at once over unread bytes sends a TCP reset, which can
 * destroy the answer in the client's buffers before it is read: a race, not a
 * behaviour of the service. (`connection: close` would make Node close at once.)
 */
function lingeringClose(res: ServerResponse): void {
  const socket = res.socket;
  if (!socket) return;
  res.req.resume();
  socket.end();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}
