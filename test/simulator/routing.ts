/**
 * Which service endpoint a request is, and its path parameters. The patterns
 * follow workflows/policy/endpoints.ts; a method that does not match a known
 * path is `unknown` (answered 404).
 */
import type { ServiceEndpoint } from '../../workflows/policy/endpoints.js';

export interface RouteMatch {
  endpoint: ServiceEndpoint;
  params: string[];
}

const ROUTES: { method: string; pattern: RegExp; endpoint: ServiceEndpoint }[] = [
  { method: 'POST', pattern: /^\/auth\/v1\/token$/, endpoint: 'tokenExchange' },
  { method: 'POST', pattern: /^\/import\/v1\/job$/, endpoint: 'createJob' },
  { method: 'PUT', pattern: /^\/import\/v1\/job\/([^/]+)\/data$/, endpoint: 'submitData' },
  { method: 'GET', pattern: /^\/import\/v1\/job\/([^/]+)$/, endpoint: 'jobStatus' },
  { method: 'GET', pattern: /^\/import\/v1\/jobs$/, endpoint: 'listJobs' },
  { method: 'GET', pattern: /^\/import\/v1\/supported_activity_types$/, endpoint: 'activityTypes' },
  { method: 'GET', pattern: /^\/import\/v1\/activity_fields\/([^/]+)$/, endpoint: 'activityFields' },
  { method: 'GET', pattern: /^\/import\/v1\/([^/]+)\/sources$/, endpoint: 'listSources' },
  {
    method: 'GET',
    pattern: /^\/integration\/v1\/custom-sources\/([^/]+)\/field-mappings\/([^/]+)$/,
    endpoint: 'getFieldMappings',
  },
  {
    method: 'PUT',
    pattern: /^\/integration\/v1\/custom-sources\/([^/]+)\/field-mappings\/([^/]+)$/,
    endpoint: 'putFieldMappings',
  },
];

export function matchRoute(method: string, pathname: string): RouteMatch | undefined {
  for (const route of ROUTES) {
    if (route.method !== method) continue;
    const m = route.pattern.exec(pathname);
    if (m) return { endpoint: route.endpoint, params: m.slice(1).map((p) => decodeURIComponent(p)) };
  }
  return undefined;
}
