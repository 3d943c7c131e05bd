/** Shared set-up for the service client tests: a real simulator and a client pointed at it. */
import type { TokenSource } from '../../../activities/service/bearer-token.js';
import { ServiceClient, type ServiceClientOptions } from '../../../activities/service/client.js';
import { DEMO_TOKENS, type Simulator, startSimulator } from '../../simulator/server.js';

export function fixedToken(token: string): TokenSource {
  return { current: async () => ({ token, version: 1 }) };
}

export interface Harness {
  sim: Simulator;
  client: ServiceClient;
  /** A second client with other options or another token; closed with the harness. */
  clientWith(options: Partial<ServiceClientOptions>): ServiceClient;
  close(): Promise<void>;
}

export async function startHarness(
  simOptions: Parameters<typeof startSimulator>[0] = {},
  clientOptions: Partial<ServiceClientOptions> = {},
): Promise<Harness> {
  const sim = await startSimulator(simOptions);
  const clients: ServiceClient[] = [];
  const clientWith = (options: Partial<ServiceClientOptions>) => {
    const c = new ServiceClient({ baseUrl: sim.baseUrl, tokens: fixedToken(DEMO_TOKENS.importer), ...options });
    clients.push(c);
    return c;
  };
  const client = clientWith(clientOptions);
  return {
    sim,
    client,
    clientWith,
    async close() {
      await Promise.all(clients.map((c) => c.close()));
      await sim.close();
    },
  };
}

/** The rejection of `p`, failing the test when it resolves. */
export async function rejectionOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected the call to fail, but it succeeded');
}
