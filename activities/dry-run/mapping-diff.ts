/**
 * The dry run's field-mapping diff: applyFieldMappings' read and compare,
 * never its write, and the custom source's name the import's job would be
 * created on. It takes no mapping lock either: it changes nothing.
 */
import { Context } from '@temporalio/activity';
import type { DiffFieldMappingsInput, DryRunStep, MappingDiff } from '../../workflows/contracts/dry-run.js';
import { type MappingService, mappingDifference } from '../apply-field-mappings.js';
import { type CustomSourceService, customSourceName } from '../create-job/custom-source-name.js';
import { failure } from '../failures.js';
import type { ReferenceCache } from '../reference-cache.js';
import { ServiceCalls, type ServiceCallsDeps } from '../service-calls.js';
import { dryRunStep, refusedStep } from './step.js';

export interface DiffFieldMappingsDeps extends ServiceCallsDeps {
  service: Pick<MappingService, 'getFieldMappings'> & CustomSourceService;
  reference: ReferenceCache;
}

export function makeDiffFieldMappings(deps: DiffFieldMappingsDeps) {
  return async function diffFieldMappings(input: DiffFieldMappingsInput): Promise<DryRunStep<MappingDiff>> {
    let calls: ServiceCalls;
    try {
      calls = ServiceCalls.forCurrentActivity(deps, input.tenant);
    } catch (err) {
      return refusedStep(err);
    }
    const signal = Context.current().cancellationSignal;
    const { sourceId, objectType, mappings } = input.set;
    return dryRunStep(calls, async () => {
      const actual = await calls
        .run('getFieldMappings', () => deps.service.getFieldMappings(sourceId, objectType, { signal }))
        .catch((err: unknown) => {
          // Worded as applyFieldMappings words it, so the report reads as the import's failure would.
          if ((err as { type?: string }).type !== 'NotFound') throw err;
          throw failure(
            'NotFound',
            `custom source ${sourceId} (${objectType}) was not found: create the custom source first, or correct fieldMappings.sourceId (${(err as Error).message})`,
            { sourceId, objectType },
          );
        });
      const { missing, unexpected } = mappingDifference(actual, mappings);
      // The source the import's job would be created on: the only job that reads this set.
      const sourceName = await customSourceName(sourceId, deps, calls, signal);
      return {
        sourceId,
        sourceName,
        objectType,
        inPlace: missing.length === 0 && unexpected.length === 0,
        missing,
        unexpected,
      };
    });
  };
}
