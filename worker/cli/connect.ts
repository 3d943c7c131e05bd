/**
 * The CLI's Temporal client, from configuration (TEMPORAL_ADDRESS, namespace,
 * TLS and API key by the SDK's conventions). A server that cannot be reached
 * is reported in one line that says where the CLI looked and how to change it.
 */
import { Client, Connection } from '@temporalio/client';
import type { Config } from '../../temporal.config.js';
import { CliError } from './cli-error.js';

export interface CliClient {
  client: Client;
  close(): Promise<void>;
}

export async function connectClient(config: Config): Promise<CliClient> {
  const address = config.temporal.connection.address;
  let connection: Connection;
  try {
    connection = await Connection.connect({ ...config.temporal.connection, connectTimeout: '5s' });
  } catch (err) {
    const reason = (err as Error).message?.split('\n')[0] ?? String(err);
    throw new CliError(
      `cannot reach Temporal at ${address} (${reason}); set TEMPORAL_ADDRESS (and TEMPORAL_NAMESPACE) to a running server`,
    );
  }
  const client = new Client({ connection, namespace: config.temporal.namespace });
  return { client, close: () => connection.close() };
}

export function workflowUiLink(config: Config, workflowId: string): string {
  const ns = encodeURIComponent(config.temporal.namespace);
  return `${config.temporal.uiUrl}/namespaces/${ns}/workflows/${encodeURIComponent(workflowId)}`;
}
