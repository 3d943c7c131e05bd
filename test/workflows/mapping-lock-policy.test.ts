import { describe, expect, it } from 'vitest';
import { mappingLockWorkflowId, mappingSetKey } from '../../workflows/contracts/mapping-lock.js';
import { acquireRequestProblem, conflictingHolders, withHolder } from '../../workflows/mapping-lock-policy.js';

const NAME = { sourceFieldLabel: 'Account Name', serviceFieldName: 'name', dataType: 'string' };
const DOMAIN = { sourceFieldLabel: 'Account Domain', serviceFieldName: 'domain', dataType: 'string' };

describe('mapping lock policy', () => {
  it('gives one lock per source and object type', () => {
    expect(mappingLockWorkflowId('1001', 'account')).toBe('mapping-lock-1001-account');
    expect(mappingLockWorkflowId('1001', 'person')).not.toBe(mappingLockWorkflowId('1001', 'account'));
  });

  it('keys a mapping set as a set: order and extra fields do not matter, any of the three fields does', () => {
    expect(mappingSetKey([NAME, DOMAIN])).toBe(mappingSetKey([DOMAIN, { ...NAME, extra: 1 } as typeof NAME]));
    expect(mappingSetKey([NAME, DOMAIN])).not.toBe(mappingSetKey([NAME]));
    expect(mappingSetKey([NAME])).not.toBe(mappingSetKey([{ ...NAME, dataType: 'number' }]));
  });

  it('lets the same set share the lock and stops another set; an import asking again keeps one entry', () => {
    const a = { workflowId: 'a', setKey: mappingSetKey([NAME, DOMAIN]) };
    const b = { workflowId: 'b', setKey: mappingSetKey([DOMAIN, NAME]) };
    const c = { workflowId: 'c', setKey: mappingSetKey([NAME]) };
    const holders = withHolder(withHolder([], a), b);
    expect(conflictingHolders(holders, c)).toEqual([a, b]);
    expect(conflictingHolders(holders, { ...a })).toEqual([]);
    expect(withHolder(holders, a)).toHaveLength(2);
    // A lone holder asking with another set is not in its own way.
    expect(conflictingHolders([a], { workflowId: 'a', setKey: c.setKey })).toEqual([]);
  });

  it('refuses a malformed acquire request', () => {
    expect(acquireRequestProblem({ workflowId: 'a', setKey: 'k' })).toBeUndefined();
    expect(acquireRequestProblem({ workflowId: '', setKey: 'k' })).toMatch(/workflowId/);
    expect(acquireRequestProblem(undefined)).toMatch(/workflowId/);
    expect(acquireRequestProblem({ workflowId: 'a' })).toMatch(/setKey/);
  });
});
