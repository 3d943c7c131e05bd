/**
 * Benchmark child: one emulated network link in front of a local server, in
 * its own process so its CPU is not the client's. A client connects to the
 * shaping port; its bytes (TLS records included, so the handshake pays the
 * round trips too) cross a shaped pipe each way to a TLS terminator, which
 * speaks plain HTTP to the backend (s3rver, or the simulator), as a load
 * balancer in front of a service would.
 *
 * Reads LINK_SPEC (JSON, see LinkSpec) and prints `{"port": N}` when ready.
 */
import net from 'node:net';
import tls from 'node:tls';
import { type PipeShape, RateBucket, shapedPipe } from './shaped-pipe.js';
import { readPem } from './tls-ca.js';

export interface LinkSpec {
  backendPort: number;
  rttMs: number;
  /** Ceiling of one connection, each direction; Infinity for none. */
  perConnectionBytesPerSecond: number;
  /** Ceiling of the whole link, each direction. */
  totalBytesPerSecond: number;
  serverKeyPath: string;
  serverCertPath: string;
}

const spec = JSON.parse(process.env.LINK_SPEC ?? 'null') as LinkSpec | null;
if (!spec) throw new Error('LINK_SPEC is not set: this script is a child of the link benchmark');

const destroyBoth = (a: net.Socket, b: net.Socket) => {
  a.destroy();
  b.destroy();
};

const terminator = tls.createServer(
  { key: readPem(spec.serverKeyPath), cert: readPem(spec.serverCertPath) },
  (clear) => {
    const backend = net.connect(spec.backendPort, '127.0.0.1');
    clear.pipe(backend).pipe(clear);
    clear.on('error', () => destroyBoth(clear, backend));
    backend.on('error', () => destroyBoth(clear, backend));
  },
);
terminator.on('tlsClientError', () => undefined);

// Each direction of the link has its own wire: one bucket shared by every connection, one per connection.
const totalUp = new RateBucket(spec.totalBytesPerSecond);
const totalDown = new RateBucket(spec.totalBytesPerSecond);
// Enough in flight to fill the link's bandwidth-delay product twice over, and never less than 256 KiB.
const inFlightLimitBytes = Math.max(
  256 * 1024,
  Math.min(spec.perConnectionBytesPerSecond, spec.totalBytesPerSecond) * (spec.rttMs / 1000) * 2,
);

const shaper = net.createServer((client) => {
  client.setNoDelay(true);
  const toTerminator = net.connect((terminator.address() as net.AddressInfo).port, '127.0.0.1');
  toTerminator.setNoDelay(true);
  const shape = (total: RateBucket): PipeShape => ({
    oneWayDelayMs: spec.rttMs / 2,
    buckets: [total, new RateBucket(spec.perConnectionBytesPerSecond)],
    inFlightLimitBytes,
  });
  shapedPipe(client, toTerminator, shape(totalUp));
  shapedPipe(toTerminator, client, shape(totalDown));
  client.on('error', () => destroyBoth(client, toTerminator));
  toTerminator.on('error', () => destroyBoth(client, toTerminator));
  client.on('close', () => toTerminator.destroy());
  toTerminator.on('close', () => client.destroy());
});

terminator.listen(0, '127.0.0.1', () => {
  shaper.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${JSON.stringify({ port: (shaper.address() as net.AddressInfo).port })}\n`);
  });
});
process.on('SIGTERM', () => process.exit(0));
