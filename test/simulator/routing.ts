/**
 * Which service endpoint a request is, and its path parameters, read from
 * the endpoint table (workflows/contracts/endpoints.ts) that the client builds
 * its requests from. A method that does not match a known path is `unknown`
 * (answered 404).
 */
import { SERVICE_ENDPOINTS, type ServiceEndpoint } from '../../workflows/contracts/endpoints.js';

interface RouteMatch {
  endpoint: ServiceEndpoint;
  params: string[];
}

interface Route {
  method: string;
  segments: string[];
  pattern: RegExp;
  endpoint: ServiceEndpoint;
}

const isParam = (segment: string) => /^\{[^}]+\}$/.test(segment);

function route(endpoint: ServiceEndpoint): Route {
  const { method, path } = SERVICE_ENDPOINTS[endpoint];
  const segments = path.split('/');
  const source = segments.map((s) => (isParam(s) ? '([^/]+)' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/');
  return { method, segments, pattern: new RegExp(`^${source}$`), endpoint };
}

/**
 * Where two paths could both match (`/import/v1/job/{id}` and
 * `/import/v1/{entityType}/sources`), the one with a fixed segment first
 * from the left wins. Paths of different lengths never match the same request.
 */
function moreSpecificFirst(a: Route, b: Route): number {
  if (a.segments.length !== b.segments.length) return a.segments.length - b.segments.length;
  for (const [i, segment] of a.segments.entries()) {
    const byParam = Number(isParam(segment)) - Number(isParam(b.segments[i] ?? ''));
    if (byParam !== 0) return byParam;
  }
  return 0;
}

const ROUTES = (Object.keys(SERVICE_ENDPOINTS) as ServiceEndpoint[]).map(route).sort(moreSpecificFirst);

export function matchRoute(method: string, pathname: string): RouteMatch | undefined {
  for (const route of ROUTES) {
    if (route.method !== method) continue;
    const m = route.pattern.exec(pathname);
    if (m) return { endpoint: route.endpoint, params: m.slice(1).map((p) => decodeURIComponent(p)) };
  }
  return undefined;
}
