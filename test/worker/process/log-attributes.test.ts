/**
 * The worker's log lines carry what an operator can use: an activity's line
 * keeps its activity and workflow ids, not the SDK's 200-character task token.
 * Real activity log attributes: the SDK's own activityLogAttributes.
 */
import { activityLogAttributes } from '@temporalio/worker/lib/activity.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../../worker/process/logging.js';

const info = {
  isLocal: false,
  attempt: 1,
  namespace: 'default',
  base64TaskToken: 'A'.repeat(200),
  activityId: '7',
  activityType: 'uploadData',
  taskQueue: 'bulk-import-uploads',
  inWorkflow: true,
  workflowExecution: { workflowId: 'import-1', runId: 'r' },
  workflowType: 'importFile',
};

describe('activity log lines', () => {
  afterEach(() => vi.restoreAllMocks());

  it('carry the activity and workflow ids but not the task token', () => {
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    // biome-ignore lint/suspicious/noExplicitAny: the SDK's Info has many more fields than the attributes read.
    const attributes = activityLogAttributes(info as any);
    expect(attributes.taskToken).toHaveLength(200);
    createLogger('INFO', true).info('Activity started', attributes);
    vi.restoreAllMocks();
    const line = JSON.parse(lines.join('')) as Record<string, unknown>;
    expect(line).toMatchObject({ message: 'Activity started', activityId: '7', workflowId: 'import-1', attempt: 1 });
    expect(line).not.toHaveProperty('taskToken');
  });
});
