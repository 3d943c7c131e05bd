/**
 * A TCP proxy on 127.0.0.1 that stands for a slow path to the service (a
 * buffering proxy, a congested link): once told to, it passes the head of
 * every PUT at once, so the service sees the request begin, and holds its body
 * until `release()`. The bytes have left the worker (the proxy took them all);
 * they reach the service only when the test says. Answers pass untouched.
 */
import type { AddressInfo } from 'node:net';
import { connect, createServer, type Socket } from 'node:net';

export interface HoldingProxy {
  readonly port: number;
  /** Bytes of PUT bodies taken from the worker and not yet passed on. */
  readonly heldBytes: number;
  /** From now on, every PUT's body is held (its head passes). */
  holdPutBodies(): void;
  /** Passes every held byte on, in order, and holds nothing more. */
  release(): void;
  close(): Promise<void>;
}

const HEAD_END = Buffer.from('\r\n\r\n');

export async function startHoldingProxy(upstreamPort: number): Promise<HoldingProxy> {
  const sockets = new Set<Socket>();
  const flushes = new Set<() => void>();
  let holding = false;
  let heldBytes = 0;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = createServer((client) => {
    track(client);
    const upstream = connect({ host: '127.0.0.1', port: upstreamPort });
    track(upstream);
    upstream.pipe(client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
    const held: Buffer[] = [];
    let holdingHere = false;
    const flush = () => {
      holdingHere = false;
      for (const chunk of held) upstream.write(chunk);
      heldBytes -= held.reduce((n, chunk) => n + chunk.length, 0);
      held.length = 0;
    };
    flushes.add(flush);
    client.once('close', () => flushes.delete(flush));
    client.on('data', (chunk: Buffer) => {
      let pass = chunk;
      if (!holdingHere && holding && chunk.subarray(0, 4).toString('latin1') === 'PUT ') {
        const headEnd = chunk.indexOf(HEAD_END);
        // A head split over chunks is not expected from the client: hold from its first byte then.
        const cut = headEnd < 0 ? 0 : headEnd + HEAD_END.length;
        pass = chunk.subarray(0, cut);
        held.push(chunk.subarray(cut));
        heldBytes += chunk.length - cut;
        holdingHere = true;
      } else if (holdingHere) {
        held.push(chunk);
        heldBytes += chunk.length;
        pass = Buffer.alloc(0);
      }
      if (pass.length > 0) upstream.write(pass);
    });
    client.once('end', () => {
      if (!holdingHere) upstream.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    get heldBytes() {
      return heldBytes;
    },
    holdPutBodies() {
      holding = true;
    },
    release() {
      holding = false;
      for (const flush of flushes) flush();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
