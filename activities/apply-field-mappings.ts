/**
 * The applyFieldMappings activity: makes the custom source's mapping set equal
 * to the wanted one. It reads first and writes only when the sets differ
 * (compared as sets: the service need not keep our order), then reads back,
 * because a PUT that answered 201 is not proof the set took. Asked to, it
 * first takes the source's mapping lock for the calling import, so that no
 * other running import changes the set while this one's job is in flight.
 */
import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ApplyFieldMappingsInput, ApplyFieldMappingsResult } from '../workflows/contracts/activities.js';
import type { FieldMapping, MappingObjectType } from '../workflows/contracts/import-input.js';
import { mappingSetKey } from '../workflows/contracts/mapping-lock.js';
import { failure } from './failures.js';
import type { MappingLocks } from './mapping-lock.js';
import type { CallOptions } from './service/types.js';
import { ServiceCalls, type ServiceCallsDeps } from './service-calls.js';

/** What this activity needs of the service client. */
export interface MappingService {
  getFieldMappings(sourceId: string, objectType: MappingObjectType, options?: CallOptions): Promise<FieldMapping[]>;
  putFieldMappings(
    sourceId: string,
    objectType: MappingObjectType,
    mappings: FieldMapping[],
    options?: CallOptions,
  ): Promise<void>;
}

interface ApplyFieldMappingsDeps extends ServiceCallsDeps {
  service: MappingService;
  locks: MappingLocks;
}

/** Only the three fields the spec defines take part: anything extra the service adds is not ours to compare. */
function mappingKey(m: FieldMapping): string {
  return JSON.stringify([m.sourceFieldLabel, m.serviceFieldName, m.dataType]);
}

/** The wanted mappings the service lacks, and the service's mappings nobody wanted. */
export function mappingDifference(
  actual: FieldMapping[],
  wanted: FieldMapping[],
): { missing: FieldMapping[]; unexpected: FieldMapping[] } {
  const actualKeys = new Set(actual.map(mappingKey));
  const wantedKeys = new Set(wanted.map(mappingKey));
  return {
    missing: wanted.filter((m) => !actualKeys.has(mappingKey(m))),
    unexpected: actual.filter((m) => !wantedKeys.has(mappingKey(m))),
  };
}

function sameSet(actual: FieldMapping[], wanted: FieldMapping[]): boolean {
  const d = mappingDifference(actual, wanted);
  return d.missing.length === 0 && d.unexpected.length === 0;
}

export function makeApplyFieldMappings(deps: ApplyFieldMappingsDeps) {
  return async function applyFieldMappings(input: ApplyFieldMappingsInput): Promise<ApplyFieldMappingsResult> {
    const signal = Context.current().cancellationSignal;
    const calls = ServiceCalls.forCurrentActivity(deps, input.tenant);
    const { sourceId, objectType, mappings } = input.set;
    const where = `custom source ${sourceId} (${objectType})`;
    if (input.mappingLockHolder !== undefined) {
      const answer = await deps.locks.acquire(sourceId, objectType, {
        workflowId: input.mappingLockHolder,
        setKey: mappingSetKey(mappings),
      });
      if (!answer.granted) {
        const heldBy = answer.heldBy ?? [];
        throw failure(
          'MappingConflict',
          `${where}: running import ${heldBy.join(', ')} applied a different mapping set, and its job depends on it; ` +
            'the service keeps one set per source, so retry this import once that one has finished',
          { sourceId, objectType, heldBy },
        );
      }
    }
    const read = () =>
      calls.run('getFieldMappings', () => deps.service.getFieldMappings(sourceId, objectType, { signal }));
    try {
      if (sameSet(await read(), mappings)) {
        log.info('Field mappings already in place', { sourceId, objectType, mappings: mappings.length });
        return { changed: false, apiCalls: calls.counts };
      }
      // The only shape the service offers: the whole set, replacing what is there.
      const wanted = mappings.map(({ sourceFieldLabel, serviceFieldName, dataType }) => ({
        sourceFieldLabel,
        serviceFieldName,
        dataType,
      }));
      await calls.run('putFieldMappings', () =>
        deps.service.putFieldMappings(sourceId, objectType, wanted, { signal }),
      );
      const after = await read();
      const d = mappingDifference(after, mappings);
      if (d.missing.length > 0 || d.unexpected.length > 0) {
        throw failure(
          'MappingNotApplied',
          `${where}: the service accepted the mapping set but reads back a different one ` +
            `(${d.missing.length} missing, ${d.unexpected.length} unexpected); check the source's mappings in the service`,
          { sourceId, objectType, missing: d.missing, unexpected: d.unexpected },
        );
      }
      log.info('Field mappings applied', { sourceId, objectType, mappings: mappings.length });
      return { changed: true, apiCalls: calls.counts };
    } catch (err) {
      if (err instanceof ApplicationFailure && err.type === 'NotFound') {
        throw failure(
          'NotFound',
          `${where} was not found: create the custom source first, or correct fieldMappings.sourceId (${err.message})`,
          { sourceId, objectType },
        );
      }
      throw err;
    }
  };
}
