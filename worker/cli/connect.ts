/**
 * The CLI's Temporal client, from configuration (TEMPORAL_ADDRESS, namespace,
 * TLS and API key by the SDK's conventions). A server that cannot be reached
 * is reported in one line that says where the CLI looked and how to change it.
 */
import { Client, Connection } from '@temporalio/client';
import type { TemporalConfig } from '../../temporal.config.js';
import { transportFailureReason } from '../shared/transport-errors.js';
import { CliError } from './cli-error.js';

export interface CliClient {
  client: Client;
  close(): Promise<void>;
}

export async function connectClient(temporal: TemporalConfig): Promise<CliClient> {
  let connection: Connection;
  try {
    connection = await Connection.connect({ ...temporal.connection, connectTimeout: '5s' });
  } catch (err) {
    throw new CliError(
      `cannot reach Temporal at ${temporal.connection.address} (${transportFailureReason(err)}); set TEMPORAL_ADDRESS (and TEMPORAL_NAMESPACE) to a running server`,
    );
  }
  const client = new Client({ connection, namespace: temporal.namespace });
  return { client, close: () => connection.close() };
}

export function workflowUiLink(temporal: TemporalConfig, workflowId: string): string {
  const ns = encodeURIComponent(temporal.namespace);
  return `${temporal.uiUrl}/namespaces/${ns}/workflows/${encodeURIComponent(workflowId)}`;
}
