/**
 * The `source` an import's job is created on. Field mappings take effect
 * only on a job named after their custom source, by the name the service
 * lists, never by its numeric id (service-facts.md, "How field mappings
 * reach an import job"): an import that applied source 1001's mappings
 * creates its job on "Salesforce CRM". The name is one custom-source read,
 * kept per worker like the other reference data (a rename shows within the
 * cache's lifetime) and counted with the activity's calls.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { CreateImportJobInput } from '../../workflows/contracts/activities.js';
import { failure } from '../failures.js';
import type { ReferenceCache } from '../reference-cache.js';
import type { CallOptions, CustomSource } from '../service/types.js';
import type { ServiceCalls } from '../service-calls.js';

/** What naming a custom source needs of the service client. */
export interface CustomSourceService {
  getCustomSource(sourceId: string, options?: CallOptions): Promise<CustomSource>;
}

export interface CustomSourceNameDeps {
  service: CustomSourceService;
  reference: ReferenceCache;
}

/** The input with `importSource` set to the name of the custom source whose mappings the import applied. */
export async function onCustomSource(
  input: CreateImportJobInput,
  deps: CustomSourceNameDeps,
  calls: ServiceCalls,
  signal?: AbortSignal,
): Promise<CreateImportJobInput> {
  const sourceId = input.customSourceId;
  if (sourceId === undefined) return input;
  return { ...input, importSource: await customSourceName(sourceId, deps, calls, signal) };
}

/** The name the service lists custom source `sourceId` by, from the worker's cache or one read. */
export function customSourceName(
  sourceId: string,
  deps: CustomSourceNameDeps,
  calls: ServiceCalls,
  signal?: AbortSignal,
): Promise<string> {
  return deps.reference.get(`custom-source/${sourceId}`, () =>
    calls
      .run('getCustomSource', () => deps.service.getCustomSource(sourceId, { signal }))
      .then(
        (source) => source.name,
        (err: unknown) => {
          if (err instanceof ApplicationFailure && err.type === 'NotFound') {
            throw failure(
              'InvalidInput',
              `custom source ${sourceId} (fieldMappings.sourceId) does not exist: the service answered 404; name a custom source the tenant has`,
              { sourceId },
            );
          }
          throw err;
        },
      ),
  );
}
