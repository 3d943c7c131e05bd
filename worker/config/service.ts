/**
 * The service connection the worker needs (the CLI does without): its base
 * URL, which must be https unless it is a loopback address, and exactly one
 * way to get a token.
 */
import { endpointPath } from '../../workflows/contracts/endpoints.js';
import { rawValue, readVariable } from './declarations.js';
import { ConfigError, fail } from './errors.js';
import type { Secret } from './secret.js';
import type { Env, ServiceConfig, TokenConfig } from './types.js';

function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export function readServiceConfig(env: Env): ServiceConfig {
  const baseUrl = readVariable(env, 'COMPANY_DATA_BASE_URL');
  if (!baseUrl) fail('COMPANY_DATA_BASE_URL', 'the service base URL, e.g. https://api.example.com');
  if (!baseUrl.startsWith('https:') && !isLoopbackUrl(baseUrl)) {
    fail('COMPANY_DATA_BASE_URL', 'https (plain http is allowed only for loopback addresses)', baseUrl);
  }
  const token = readTokenConfig(env, baseUrl);
  return {
    baseUrl,
    token,
    requestTimeoutMs: readVariable(env, 'COMPANY_DATA_REQUEST_TIMEOUT'),
    uploadIdleTimeoutMs: readVariable(env, 'UPLOAD_IDLE_TIMEOUT'),
  };
}

const TOKEN_SOURCES = ['COMPANY_DATA_TOKEN', 'COMPANY_DATA_TOKEN_FILE', 'COMPANY_DATA_CLIENT_ID'] as const;

/** Exactly one token source: two would leave a reader guessing which one the worker uses. */
function readTokenConfig(env: Env, baseUrl: string): TokenConfig {
  const given = TOKEN_SOURCES.filter((name) => rawValue(env, name) !== undefined);
  if (given.length !== 1) {
    throw new ConfigError(
      `exactly one of ${TOKEN_SOURCES.join(', ')} must be set: the worker needs one way to get its service token; ${given.length === 0 ? 'none is set' : `${given.join(' and ')} are set`}`,
    );
  }
  const tokenFile = readVariable(env, 'COMPANY_DATA_TOKEN_FILE');
  if (tokenFile) return { kind: 'file', path: tokenFile };
  const clientId = readVariable(env, 'COMPANY_DATA_CLIENT_ID');
  if (!clientId) return { kind: 'env', token: readVariable(env, 'COMPANY_DATA_TOKEN') as Secret };
  return {
    kind: 'client-credentials',
    tokenUrl: `${baseUrl}${endpointPath('tokenExchange')}`,
    clientId,
    clientSecret: readClientSecret(env),
  };
}

function readClientSecret(env: Env): { value: Secret } | { file: string } {
  const value = readVariable(env, 'COMPANY_DATA_CLIENT_SECRET');
  const file = readVariable(env, 'COMPANY_DATA_CLIENT_SECRET_FILE');
  if ((value === undefined) === (file === undefined)) {
    throw new ConfigError(
      `exactly one of COMPANY_DATA_CLIENT_SECRET or COMPANY_DATA_CLIENT_SECRET_FILE must be set with COMPANY_DATA_CLIENT_ID; ${value === undefined ? 'neither is set' : 'both are set'}`,
    );
  }
  return value === undefined ? { file: file as string } : { value };
}
