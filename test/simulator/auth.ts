/**
 * Bearer-token checks. 401 when the token is missing, unknown or expired;
 * 403 when an import path is called without the `Import Data` permission.
 * Field-mapping paths need a valid token but no import permission (the
 * service names `Import Data` for import paths only).
 */
import type { ServiceEndpoint } from '../../workflows/policy/endpoints.js';
import { authError, isMappingEndpoint } from './error-bodies.js';
import type { Reply } from './http-io.js';

export const IMPORT_PERMISSION = 'Import Data';

export interface TokenGrant {
  permissions: string[];
  expired?: boolean;
}

export type TokenTable = Record<string, TokenGrant>;

/** The answer to refuse with, or undefined when the caller may proceed. */
export function authorize(
  authorization: string | undefined,
  endpoint: ServiceEndpoint,
  tokens: TokenTable,
): Reply | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) return authError(401, 'Unauthorized: missing bearer token');
  const grant = Object.hasOwn(tokens, match[1]!) ? tokens[match[1]!] : undefined;
  if (!grant) return authError(401, 'Unauthorized: invalid token');
  if (grant.expired) return authError(401, 'Unauthorized: token expired');
  if (!isMappingEndpoint(endpoint) && !grant.permissions.includes(IMPORT_PERMISSION)) {
    return authError(403, `Forbidden: the token lacks the ${IMPORT_PERMISSION} permission`);
  }
  return undefined;
}
