/**
 * Connection failures as an operator should read them. The SDK's native
 * transport reports Rust debug output (`tonic::transport::Error(Transport,
 * ConnectError(...))`); that never reaches the one line we print.
 */
const KNOWN_CAUSES: [RegExp, string][] = [
  [/connection refused/i, 'connection refused'],
  [/dns error|failed to lookup address|name or service not known/i, 'host name not found'],
  [/deadline|timed? ?out/i, 'no answer before the deadline'],
  [/certificate|tls|ssl|handshake/i, 'TLS handshake failed'],
  [/unauthenticated|api key|401/i, 'the server refused the credentials'],
  [/connection reset|broken pipe/i, 'the connection was reset'],
];

const INTERNALS = /tonic::|transport::|ConnectError\(|Custom \{/;

export function hasTransportInternals(message: string): boolean {
  return INTERNALS.test(message);
}

/** A short reason for a failed connection: a known cause, or the message when it holds no transport internals. */
export function transportFailureReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  for (const [pattern, reason] of KNOWN_CAUSES) if (pattern.test(message)) return reason;
  if (hasTransportInternals(message)) return 'transport error';
  return message.split('\n')[0] ?? 'unknown error';
}
