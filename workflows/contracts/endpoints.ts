/**
 * The Company Data Service endpoints this worker calls: each one's method and
 * path, said once. The client builds its requests from these paths and the
 * simulator routes by them.
 *
 * The service enforces a daily request limit on each import endpoint (spec,
 * "Limits / Import"); writes and reads have limits of their own, so each
 * budgeted endpoint names its budget class. The numbers are configuration
 * (IMPORT_BUDGET_WRITE_DAILY, IMPORT_BUDGET_READ_DAILY), never written here.
 * The integration endpoints (custom sources and their field mappings) have
 * no published limit, so they are counted but not budgeted.
 */
type BudgetClass = 'write' | 'read';

interface Endpoint {
  method: 'GET' | 'POST' | 'PUT';
  /** Relative to the service's base URL; `{name}` is a path parameter. */
  path: string;
}

export const BUDGETED_ENDPOINTS = {
  createJob: { method: 'POST', path: '/import/v1/job', budget: 'write' },
  submitData: { method: 'PUT', path: '/import/v1/job/{id}/data', budget: 'write' },
  jobStatus: { method: 'GET', path: '/import/v1/job/{id}', budget: 'read' },
  listJobs: { method: 'GET', path: '/import/v1/jobs', budget: 'read' },
  listSources: { method: 'GET', path: '/import/v1/{entityType}/sources', budget: 'read' },
  activityTypes: { method: 'GET', path: '/import/v1/supported_activity_types', budget: 'read' },
  activityFields: { method: 'GET', path: '/import/v1/activity_fields/{activityTypeId}', budget: 'read' },
} as const satisfies Record<string, Endpoint & { budget: BudgetClass }>;

export type BudgetedEndpoint = keyof typeof BUDGETED_ENDPOINTS;

const UNBUDGETED_ENDPOINTS = {
  /** The client-credentials exchange of the built-in token source. */
  tokenExchange: { method: 'POST', path: '/auth/v1/token' },
  /** One custom source: its name is what an import job's `source` names. */
  getCustomSource: { method: 'GET', path: '/integration/v1/custom-sources/{source_id}' },
  listCustomSources: { method: 'GET', path: '/integration/v1/custom-sources' },
  getFieldMappings: {
    method: 'GET',
    path: '/integration/v1/custom-sources/{source_id}/field-mappings/{object_type}',
  },
  putFieldMappings: {
    method: 'PUT',
    path: '/integration/v1/custom-sources/{source_id}/field-mappings/{object_type}',
  },
} as const satisfies Record<string, Endpoint>;

export type ServiceEndpoint = BudgetedEndpoint | keyof typeof UNBUDGETED_ENDPOINTS;

/** Every endpoint by name, budgeted or not. */
export const SERVICE_ENDPOINTS = { ...BUDGETED_ENDPOINTS, ...UNBUDGETED_ENDPOINTS };

export const BUDGETED_ENDPOINT_NAMES = Object.keys(BUDGETED_ENDPOINTS) as BudgetedEndpoint[];

export function isBudgetedEndpoint(name: unknown): name is BudgetedEndpoint {
  return typeof name === 'string' && Object.hasOwn(BUDGETED_ENDPOINTS, name);
}

export function isServiceEndpoint(name: unknown): name is ServiceEndpoint {
  return typeof name === 'string' && Object.hasOwn(SERVICE_ENDPOINTS, name);
}

/** Each budgeted endpoint's daily limit: the limit of its budget class. */
export function dailyLimitsByClass(limits: Record<BudgetClass, number>): Record<BudgetedEndpoint, number> {
  return Object.fromEntries(BUDGETED_ENDPOINT_NAMES.map((e) => [e, limits[BUDGETED_ENDPOINTS[e].budget]])) as Record<
    BudgetedEndpoint,
    number
  >;
}

/** The `{name}`s of a path template. */
type PathParamNames<P extends string> = P extends `${string}{${infer Name}}${infer Rest}`
  ? Name | PathParamNames<Rest>
  : never;

type PathParams<E extends ServiceEndpoint> = Record<
  PathParamNames<(typeof SERVICE_ENDPOINTS)[E]['path']>,
  string | number
>;

/** An endpoint's path with its parameters filled in, each URI-encoded. */
export function endpointPath<E extends ServiceEndpoint>(
  endpoint: E,
  ...[params]: [PathParamNames<(typeof SERVICE_ENDPOINTS)[E]['path']>] extends [never] ? [] : [PathParams<E>]
): string {
  const values = (params ?? {}) as Record<string, string | number>;
  return SERVICE_ENDPOINTS[endpoint].path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new RangeError(`${endpoint} needs its path parameter ${name}`);
    return encodeURIComponent(String(value));
  });
}

/** Calls made per endpoint, as activities report them and workflows sum them. */
export type ApiCallCounts = Partial<Record<ServiceEndpoint, number>>;

export function addApiCalls(into: ApiCallCounts, more: ApiCallCounts | undefined): ApiCallCounts {
  for (const [endpoint, n] of Object.entries(more ?? {}) as [ServiceEndpoint, number][]) {
    into[endpoint] = (into[endpoint] ?? 0) + n;
  }
  return into;
}
