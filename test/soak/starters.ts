/**
 * The three ways an import starts in production: the operator CLI
 * (`import-worker start`, compiled), the plain Temporal client
 * (`client.workflow.start('importFile')` with the object version's id, as the
 * docs/operating.md tells a plain-client user to), and the nightly schedule
 * (`import-worker schedules apply` and `trigger`). Each start is tried a
 * bounded number of times: the dev server may be down for a restart.
 */
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Client, WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/client';
import { objectImportWorkflowId } from '../../workflows/contracts/nightly.js';
import type { SoakObject } from './objects.js';
import { cleanEnv, ROOT } from './workers.js';

export type StartOutcome = 'started' | 'already' | 'failed';

export interface Starters {
  viaCli(object: SoakObject): Promise<StartOutcome>;
  viaClient(object: SoakObject): Promise<StartOutcome>;
  applySchedules(): Promise<StartOutcome>;
  triggerNightly(feedId: string): Promise<StartOutcome>;
}

export function createStarters(
  client: () => Client,
  env: Record<string, string>,
  cliLog: string,
  compiled: string,
): Starters {
  const cliMain = join(compiled, 'worker', 'cli', 'main.js');
  const cli = async (args: string[]): Promise<StartOutcome> => {
    for (let attempt = 1; attempt <= 4; attempt++) {
      const { code, output } = await runCli(cliMain, args, env);
      appendFileSync(cliLog, `$ import-worker ${args.join(' ')}\n${output}exit ${code}\n`);
      if (code === 0) return 'started';
      if (/already (imported|being imported)/.test(output)) return 'already';
      await sleep(3_000 * attempt);
    }
    return 'failed';
  };
  return {
    viaCli: (object) =>
      cli([
        'start',
        '--bucket',
        object.bucket,
        '--key',
        object.key,
        '--name',
        object.name,
        '--entity-type',
        'Account',
        '--list-action',
        'insert',
        ...(object.encoding ? ['--encoding', object.encoding] : []),
        ...(object.skipsRejected ? ['--on-rejected-rows', 'skip'] : []),
      ]),
    async viaClient(object) {
      for (let attempt = 1; attempt <= 4; attempt++) {
        try {
          await client().workflow.start('importFile', {
            taskQueue: 'bulk-import',
            workflowId: objectImportWorkflowId(object.bucket, object.key, object.etag),
            workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
            args: [
              {
                source: { bucket: object.bucket, key: object.key },
                dataImportName: object.name,
                entityType: 'Account',
                listAction: 'insert',
                ...(object.encoding || object.skipsRejected
                  ? {
                      rows: {
                        ...(object.encoding ? { encoding: object.encoding } : {}),
                        ...(object.skipsRejected ? { onRejectedRows: 'skip' as const } : {}),
                      },
                    }
                  : {}),
              },
            ],
          });
          return 'started';
        } catch (error) {
          if (error instanceof WorkflowExecutionAlreadyStartedError) return 'already';
          appendFileSync(cliLog, `client start of ${object.key} failed: ${(error as Error).message}\n`);
          await sleep(3_000 * attempt);
        }
      }
      return 'failed';
    },
    applySchedules: () => cli(['schedules', 'apply']),
    triggerNightly: (feedId) => cli(['schedules', 'trigger', feedId]),
  };
}

/** Runs the compiled CLI for at most 60 s. */
function runCli(
  cliMain: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cliMain, ...args], { cwd: ROOT, env: cleanEnv(env) });
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      output += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
