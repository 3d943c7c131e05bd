/**
 * Histories recorded from real Temporal servers, committed under
 * `test/workflows/histories/` as replay fixtures: the determinism guard. The
 * real-server tests record the run they drove when RECORD_HISTORIES_DIR names
 * a folder (`npm run record:histories` sets it, see record-histories.ts);
 * the replay suite loads every file in the folder.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';

export const HISTORIES_DIR = path.resolve(import.meta.dirname, 'histories');

export type RecordingServer = 'dev-server' | 'time-skipping-server';

interface RecordedHistory {
  /** The real-server test that drove the run. */
  scenario: string;
  server: RecordingServer;
  workflowId: string;
  runId: string;
  workflowType: string;
  /** The history as `temporal workflow show --output json` and `Worker.runReplayHistory` take it. */
  history: { events: Record<string, unknown>[] };
}

const PROJECT_ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * Worker identities and sticky queues name the recording machine (pid@host),
 * and failure stack traces its checkout; they mean nothing to a replay.
 */
function withoutMachineNames(historyJson: string): unknown {
  const rootInJson = JSON.stringify(PROJECT_ROOT).slice(1, -1);
  return JSON.parse(historyJson.replaceAll(hostname(), 'recorder-host').replaceAll(rootInJson, '<project>'));
}

/**
 * Writes the history of one run as fixture `<name>.json` when recording
 * (RECORD_HISTORIES_DIR set); otherwise does nothing. The run must be closed
 * or idle, so the history is complete.
 */
export async function recordHistory(
  client: Client,
  run: { name: string; scenario: string; server: RecordingServer; workflowId: string; runId?: string },
): Promise<void> {
  const dir = process.env.RECORD_HISTORIES_DIR;
  if (!dir) return;
  const handle = client.workflow.getHandle(run.workflowId, run.runId);
  const description = await handle.describe();
  const history = withoutMachineNames(historyToJSON(await handle.fetchHistory()));
  const recorded: RecordedHistory = {
    scenario: run.scenario,
    server: run.server,
    workflowId: run.workflowId,
    runId: description.runId,
    workflowType: description.type,
    history: history as RecordedHistory['history'],
  };
  writeFileSync(path.join(dir, `${run.name}.json`), `${JSON.stringify(recorded, null, 1)}\n`);
}

/**
 * Every committed fixture, by path under the folder: the current recordings
 * at the top, and those of released versions kept in subfolders (which
 * `npm run record:histories` leaves alone).
 */
export function loadRecordedHistories(dir = HISTORIES_DIR): { file: string; recorded: RecordedHistory }[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({ file, recorded: JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as RecordedHistory }));
}
