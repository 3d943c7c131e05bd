/**
 * The mapping lock's contract: its workflow id, messages and holders, and the
 * key of a mapping set (computed by applyFieldMappings, compared by the lock).
 * The service keeps one field-mapping set per custom source and object type,
 * and its PUT replaces the whole set: two imports that want different sets for
 * one source must not overlap, or the second overwrites the first's mappings
 * while the first's job is still in flight. So each import holds the source's
 * lock from applying its mappings until it ends; imports that want the same
 * set share it, and one that wants another set is refused (MappingConflict).
 * The lock's decisions are in mapping-lock-policy.ts. Pure code: it runs in
 * the workflow sandbox and in activities alike.
 */
import type { FieldMapping, MappingObjectType } from './import-input.js';
import { fnv1a64 } from './job-key.js';

export const MAPPING_LOCK_WORKFLOW_TYPE = 'mappingLock';

/** One lock per custom source and object type: sourceId is digits and objectType a word, so the id is readable. */
export function mappingLockWorkflowId(sourceId: string, objectType: MappingObjectType): string {
  return `mapping-lock-${sourceId}-${objectType}`;
}

/** An import holding the lock, and the mapping set it applied. */
export interface MappingLockHolder {
  /** The import's workflow id (not the run: a reset run of the same import still holds it). */
  workflowId: string;
  /** mappingSetKey of the set it wants. */
  setKey: string;
}

export interface MappingLockInput {
  sourceId: string;
  objectType: MappingObjectType;
  /** Carried across continue-as-new. */
  holders?: MappingLockHolder[];
}

export type AcquireMappingLockRequest = MappingLockHolder;

export interface AcquireMappingLockAnswer {
  granted: boolean;
  /** When refused: the imports holding the lock with another set. */
  heldBy?: string[];
}

export interface ReleaseMappingLockSignal {
  workflowId: string;
}

/**
 * The same key for the same set, however it is ordered: the service compares
 * sets, and so does applyFieldMappings. Only the three fields the spec defines
 * take part.
 */
export function mappingSetKey(mappings: readonly FieldMapping[]): string {
  const entries = [
    ...new Set(mappings.map((m) => JSON.stringify([m.sourceFieldLabel, m.serviceFieldName, m.dataType]))),
  ].sort();
  return fnv1a64(entries.join('\n'));
}
