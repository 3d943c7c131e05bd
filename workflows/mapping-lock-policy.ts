/**
 * The mapping lock's decisions: who stands in the way of a request, who holds
 * the lock after it, and which requests are malformed. Its contract (ids,
 * messages, holders, mappingSetKey) is in contracts/mapping-lock.ts.
 * Pure code: it runs in the workflow sandbox.
 */
import type { AcquireMappingLockRequest, MappingLockHolder } from './contracts/mapping-lock.js';

/** The holders that stand in the way of `request`: those (other than itself) that want another set. */
export function conflictingHolders(
  holders: readonly MappingLockHolder[],
  request: AcquireMappingLockRequest,
): MappingLockHolder[] {
  return holders.filter((h) => h.workflowId !== request.workflowId && h.setKey !== request.setKey);
}

/** The holders after `request` took the lock (an import that asks again keeps one entry). */
export function withHolder(
  holders: readonly MappingLockHolder[],
  request: AcquireMappingLockRequest,
): MappingLockHolder[] {
  return [...holders.filter((h) => h.workflowId !== request.workflowId), { ...request }];
}

export function acquireRequestProblem(request: unknown): string | undefined {
  const r = request as Partial<AcquireMappingLockRequest> | undefined;
  if (typeof r?.workflowId !== 'string' || r.workflowId.length === 0) return 'workflowId must be a non-empty string';
  if (typeof r.setKey !== 'string' || r.setKey.length === 0) return 'setKey must be a non-empty string';
  return undefined;
}
