/**
 * Failures of the Temporal server (or of the way to it) as an operator should
 * read them: which server, which namespace, and what to check. The SDK's own
 * words ("Failed to describe workflow", a gRPC status with Rust debug output)
 * name neither.
 */
import { NamespaceNotFoundError, ServiceError } from '@temporalio/client';
import type { TemporalConfig } from '../../temporal.config.js';
import { hasTransportInternals, transportFailureReason } from '../shared/transport-errors.js';
import { CliError } from './cli-error.js';

// gRPC status codes (@grpc/grpc-js's Status), written out: only these mean "the server, not the request".
const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_PERMISSION_DENIED = 7;
const GRPC_UNAVAILABLE = 14;
const GRPC_UNAUTHENTICATED = 16;

function grpcCodeOf(err: unknown): number | undefined {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number') return code;
  }
  return undefined;
}

function deepestMessage(err: unknown): string {
  let message = err instanceof Error ? err.message : String(err);
  for (let e: unknown = err; e instanceof Error; e = e.cause) if (e.message) message = e.message;
  return message;
}

/** The one line for a failure that is the server's, or undefined when `err` is about the request itself. */
export function serverFailureLine(err: unknown, temporal: TemporalConfig): string | undefined {
  const where = `Temporal at ${temporal.connection.address}`;
  if (err instanceof NamespaceNotFoundError) {
    return `${where} has no namespace "${err.namespace}"; set TEMPORAL_NAMESPACE to one it has (temporal operator namespace list --address ${temporal.connection.address})`;
  }
  const code = grpcCodeOf(err);
  const message = deepestMessage(err);
  if (code === GRPC_UNAUTHENTICATED || code === GRPC_PERMISSION_DENIED) {
    return `${where} refused the credentials for namespace ${temporal.namespace} (${firstLine(message)}); check TEMPORAL_API_KEY and the TLS settings`;
  }
  if (code === GRPC_UNAVAILABLE || code === GRPC_DEADLINE_EXCEEDED || hasTransportInternals(message)) {
    return `lost ${where} (${transportFailureReason(new Error(message))}); check that the server runs and that TEMPORAL_ADDRESS points at it`;
  }
  if (err instanceof ServiceError) {
    return `${where} (namespace ${temporal.namespace}) answered: ${firstLine(message)}`;
  }
  return undefined;
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
}

/** `err` as a CliError naming the server when it is the server's failure; otherwise `err` unchanged. */
export function namingTheServer(err: unknown, temporal: TemporalConfig): unknown {
  if (err instanceof CliError) return err;
  const line = serverFailureLine(err, temporal);
  return line === undefined ? err : new CliError(line);
}
