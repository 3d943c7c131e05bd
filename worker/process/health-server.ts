/**
 * The worker's health endpoints, for an orchestrator's probes:
 * - `GET /healthz`: 200 while the process runs and its event loop answers
 *   (a liveness probe restarts a process that stopped answering);
 * - `GET /readyz`: 200 when every readiness check passes, 503 otherwise, with
 *   each check's outcome as JSON, so the failed one is named.
 * Served apart from `/metrics`, which the Temporal runtime's own exporter serves.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../../temporal.config.js';
import type { ReadinessReport } from './readiness.js';

export interface HealthServer {
  readonly port: number;
  close(): Promise<void>;
}

interface HealthServerOptions {
  host: string;
  port: number;
  readiness: () => Promise<ReadinessReport>;
}

export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : `${JSON.stringify(body)}\n`);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, { error: 'only GET and HEAD' });
    const path = new URL(req.url ?? '/', 'http://worker').pathname;
    if (path === '/healthz') return send(200, { alive: true });
    if (path === '/readyz') {
      options.readiness().then(
        (report) => send(report.ready ? 200 : 503, report),
        (err: unknown) => send(503, { ready: false, error: (err as Error)?.message ?? String(err) }),
      );
      return;
    }
    send(404, { error: 'not found: /healthz and /readyz are served here' });
  });
  await listen(server, options);
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        // A probe's keep-alive connection would otherwise hold the close open.
        server.closeAllConnections();
      }),
  };
}

function listen(server: Server, { host, port }: HealthServerOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(
        err.code === 'EADDRINUSE'
          ? new ConfigError(
              `WORKER_HEALTH_PORT ${port} is already in use by another process; choose a free port, or 0 to turn the health endpoints off`,
            )
          : err.code === 'EADDRNOTAVAIL'
            ? new ConfigError(`WORKER_HTTP_HOST ${host} is not an address of this machine`)
            : err,
      );
    });
    server.listen(port, host, () => resolve());
  });
}
