/**
 * The error bodies the production service sends, by path family
 * (service-facts.md): import paths carry `{message}` (400/404/500) or
 * `{status}` (401/403); custom-source and field-mapping paths carry `{error: {code, message,
 * diagnosticCode}}`; rate limits carry the spec's error object.
 */
import { randomUUID } from 'node:crypto';
import type { ServiceEndpoint } from '../../workflows/contracts/endpoints.js';
import { json, type Reply } from './http-io.js';

function diagnosticCode(): string {
  return `sim-${randomUUID()}`;
}

const INTEGRATION_ENDPOINTS: readonly (ServiceEndpoint | 'unknown')[] = [
  'getCustomSource',
  'listCustomSources',
  'getFieldMappings',
  'putFieldMappings',
];

/** The custom-source paths (/integration/v1/...): their own error body, and no Import Data permission needed. */
export function isIntegrationEndpoint(endpoint: ServiceEndpoint | 'unknown'): boolean {
  return INTEGRATION_ENDPOINTS.includes(endpoint);
}

/**
 * 401 and 403: the `{status}` body. service-facts.md confirms it on the import
 * paths and names no 401 body for the field-mapping paths; authentication
 * sits in front of both, so the simulator assumes the same body there.
 */
export function authError(status: 401 | 403, text: string): Reply {
  return json(status, { status: text });
}

/** 400/404/500 on the import paths. */
export function importError(status: number, message: string): Reply {
  return json(status, { message });
}

const MAPPING_CODES: Record<number, string> = { 400: '400-000', 404: '404-000', 500: '500-001' };

/** 400/404/500 on the custom-source and field-mapping paths. */
export function mappingError(status: number, message: string): Reply {
  const code = MAPPING_CODES[status] ?? `${status}-000`;
  return json(status, { error: { code, message, diagnosticCode: diagnosticCode() } });
}

/** The spec's error object, used for 429s. */
export function specError(status: number, errorCode: string, errorMessage: string): Reply {
  return json(status, { errorCode, errorMessage, diagnosticCode: diagnosticCode() });
}

/** The body an injected failure carries when the test names none: what the real service would send. */
export function defaultFaultReply(endpoint: ServiceEndpoint, status: number): Reply {
  if (status === 401 || status === 403) return authError(status, `Injected ${status}`);
  if (status === 429) {
    // 429-101 is what the simulator's own daily limit answers; see limits.ts.
    return specError(429, '429-101', `Injected 429 for ${endpoint}`);
  }
  if (isIntegrationEndpoint(endpoint)) return mappingError(status, `Injected ${status}`);
  return importError(status, `Injected ${status}`);
}
