/**
 * The Company Data Service endpoints this worker calls, and the daily request
 * budgets the service enforces on the import ones (spec, "Limits / Import").
 * Field-mapping endpoints have no published limit, so they are counted but
 * not budgeted.
 */
export const BUDGETED_ENDPOINTS = {
  createJob: { method: 'POST', path: '/import/v1/job', defaultDailyLimit: 1200 },
  submitData: { method: 'PUT', path: '/import/v1/job/{id}/data', defaultDailyLimit: 1200 },
  jobStatus: { method: 'GET', path: '/import/v1/job/{id}', defaultDailyLimit: 3600 },
  listJobs: { method: 'GET', path: '/import/v1/jobs', defaultDailyLimit: 3600 },
  listSources: { method: 'GET', path: '/import/v1/{entityType}/sources', defaultDailyLimit: 3600 },
  activityTypes: {
    method: 'GET',
    path: '/import/v1/supported_activity_types',
    defaultDailyLimit: 3600,
  },
  activityFields: {
    method: 'GET',
    path: '/import/v1/activity_fields/{activityTypeId}',
    defaultDailyLimit: 3600,
  },
} as const;

export type BudgetedEndpoint = keyof typeof BUDGETED_ENDPOINTS;

export const UNBUDGETED_ENDPOINTS = {
  /** The client-credentials exchange of the built-in token source. */
  tokenExchange: { method: 'POST', path: '/auth/v1/token' },
  getFieldMappings: {
    method: 'GET',
    path: '/integration/v1/custom-sources/{source_id}/field-mappings/{object_type}',
  },
  putFieldMappings: {
    method: 'PUT',
    path: '/integration/v1/custom-sources/{source_id}/field-mappings/{object_type}',
  },
} as const;

export type ServiceEndpoint = BudgetedEndpoint | keyof typeof UNBUDGETED_ENDPOINTS;

export const BUDGETED_ENDPOINT_NAMES = Object.keys(BUDGETED_ENDPOINTS) as BudgetedEndpoint[];

export function isBudgetedEndpoint(name: unknown): name is BudgetedEndpoint {
  return typeof name === 'string' && Object.hasOwn(BUDGETED_ENDPOINTS, name);
}

/** Calls made per endpoint, as activities report them and workflows sum them. */
export type ApiCallCounts = Partial<Record<ServiceEndpoint, number>>;

export function addApiCalls(into: ApiCallCounts, more: ApiCallCounts | undefined): ApiCallCounts {
  for (const [endpoint, n] of Object.entries(more ?? {}) as [ServiceEndpoint, number][]) {
    into[endpoint] = (into[endpoint] ?? 0) + n;
  }
  return into;
}
