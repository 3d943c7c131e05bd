/**
 * A small HTTP proxy in front of s3rver, for the S3 behaviours s3rver itself
 * does not show, each switchable per request: an S3 that ignores Range (it
 * answers 200 with the whole object), one that ignores If-Match and sends no
 * ETag (it answers with whatever the key holds now), a GET cut off after K
 * body bytes (any GET, or the next one for the whole object: a reader's, not
 * a ranged sample's), and a GET refused with 403 AccessDenied. It counts the body bytes it delivered,
 * so a test can tell how much of an object a reader pulled.
 *
 * Range is part of the SDK's signature, so a ranged GET cannot be forwarded
 * without it: the proxy fetches the whole object with its own signed request.
 */
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { s3ClientFor } from '../../../worker/demo/local-s3.js';

export interface S3Proxy {
  readonly endpoint: string;
  /** While true, every ranged GET is answered 200 with the whole object. */
  ignoreRange: boolean;
  /** While true, every GET ignores If-Match and its answer carries no ETag. */
  ignoreIfMatch: boolean;
  /**
   * The next GET's body is cut (the socket destroyed) after this many bytes;
   * with `wholeObject`, the next GET without a Range (a ranged sample passes).
   */
  cutNextGetAfter(bytes: number, which?: 'any' | 'wholeObject'): void;
  /** The next GET is refused with 403 AccessDenied. */
  refuseNextGet(): void;
  /** Body bytes of GET answers written to clients so far. */
  bytesDelivered(): number;
  close(): Promise<void>;
}

export async function startS3Proxy(upstream: string): Promise<S3Proxy> {
  const target = new URL(upstream);
  const client = s3ClientFor(upstream);
  let delivered = 0;
  let cut: { afterBytes: number; which: 'any' | 'wholeObject' } | undefined;
  let refuse = false;

  /** The cut this GET takes, if one is armed for it. */
  function takeCut(req: IncomingMessage): number | undefined {
    if (!cut || (cut.which === 'wholeObject' && req.headers.range !== undefined)) return undefined;
    const { afterBytes } = cut;
    cut = undefined;
    return afterBytes;
  }

  function deliver(res: ServerResponse, body: Readable, limit: number | undefined): void {
    let sent = 0;
    body.on('data', (chunk: Buffer) => {
      if (limit !== undefined && sent + chunk.length > limit) {
        const part = chunk.subarray(0, limit - sent);
        delivered += part.length;
        res.write(part, () => res.socket?.destroy());
        body.destroy();
        return;
      }
      sent += chunk.length;
      delivered += chunk.length;
      if (!res.write(chunk)) body.pause();
    });
    res.on('drain', () => body.resume());
    body.on('end', () => res.end());
    body.on('error', () => res.socket?.destroy());
    res.on('close', () => body.destroy());
  }

  async function wholeObject(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const [bucket, ...key] = new URL(req.url ?? '/', upstream).pathname.slice(1).split('/');
    const ifMatch = req.headers['if-match'];
    const out = await client.send(
      new GetObjectCommand({
        Bucket: decodeURIComponent(bucket ?? ''),
        Key: key.map(decodeURIComponent).join('/'),
        IfMatch: typeof ifMatch === 'string' ? ifMatch : undefined,
      }),
    );
    res.writeHead(200, {
      etag: out.ETag ?? '',
      'content-length': String(out.ContentLength ?? 0),
      'content-type': out.ContentType ?? 'application/octet-stream',
      'last-modified': (out.LastModified ?? new Date()).toUTCString(),
      'accept-ranges': 'bytes',
    });
    deliver(res, out.Body as Readable, takeCut(req));
  }

  /** The key's current bytes (the range asked for, if any), without the pin or an ETag. */
  async function unpinned(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const [bucket, ...key] = new URL(req.url ?? '/', upstream).pathname.slice(1).split('/');
    const range = req.headers.range;
    const out = await client.send(
      new GetObjectCommand({
        Bucket: decodeURIComponent(bucket ?? ''),
        Key: key.map(decodeURIComponent).join('/'),
        Range: typeof range === 'string' ? range : undefined,
      }),
    );
    res.writeHead(out.ContentRange ? 206 : 200, {
      'content-length': String(out.ContentLength ?? 0),
      'content-type': out.ContentType ?? 'application/octet-stream',
      ...(out.ContentRange ? { 'content-range': out.ContentRange } : {}),
      'accept-ranges': 'bytes',
    });
    deliver(res, out.Body as Readable, takeCut(req));
  }

  function forward(req: IncomingMessage, res: ServerResponse): void {
    const upstreamReq = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (upstreamRes) => {
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        if (req.method === 'GET') deliver(res, upstreamRes, takeCut(req));
        else upstreamRes.pipe(res);
      },
    );
    upstreamReq.on('error', () => res.socket?.destroy());
    req.pipe(upstreamReq);
  }

  const server = createServer((req, res) => {
    if (req.method === 'GET' && refuse) {
      refuse = false;
      const xml =
        '<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>';
      res.writeHead(403, { 'content-type': 'application/xml', 'content-length': String(Buffer.byteLength(xml)) });
      res.end(xml);
      return;
    }
    if (req.method === 'GET' && proxy.ignoreIfMatch) {
      unpinned(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
        else res.socket?.destroy();
      });
      return;
    }
    if (req.method === 'GET' && req.headers.range !== undefined && proxy.ignoreRange) {
      wholeObject(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
        else res.socket?.destroy();
      });
      return;
    }
    forward(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const proxy: S3Proxy = {
    endpoint: `http://127.0.0.1:${port}`,
    ignoreRange: false,
    ignoreIfMatch: false,
    cutNextGetAfter: (bytes, which = 'any') => {
      cut = { afterBytes: bytes, which };
    },
    refuseNextGet: () => {
      refuse = true;
    },
    bytesDelivered: () => delivered,
    close: () =>
      new Promise<void>((resolve) => {
        client.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return proxy;
}
