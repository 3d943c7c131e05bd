import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const workflowsPath = path.resolve(import.meta.dirname, '../../workflows/index.ts');

/** Collects what webpack reports, so a test can say why a bundle failed. */
function recordingLogger() {
  const errors: string[] = [];
  const ignore = () => {};
  return {
    errors,
    logger: {
      log: ignore,
      trace: ignore,
      debug: ignore,
      info: ignore,
      warn: ignore,
      error: (m: string) => errors.push(m),
    },
  };
}

describe('workflow bundle', () => {
  let dir: string;
  beforeAll(async () => {
    // Inside the project, so that the bundler resolves @temporalio/workflow as it does for real workflows.
    dir = await mkdtemp(path.join(import.meta.dirname, '.bundle-tmp-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('bundles the project workflows for the sandbox', async () => {
    const bundle = await bundleWorkflowCode({ workflowsPath, logger: recordingLogger().logger });
    expect(bundle.code).toContain('importFile');
    expect(bundle.code).toContain('budgetLedger');
  });

  it('bundles a workflow file that does no I/O (the control for the next test)', async () => {
    const file = path.join(dir, 'pure.ts');
    await writeFile(file, 'export async function pure(): Promise<number> { return 1; }\n');
    const { logger, errors } = recordingLogger();
    await expect(bundleWorkflowCode({ workflowsPath: file, logger })).resolves.toHaveProperty('code');
    expect(errors).toEqual([]);
  });

  it('refuses a workflow file that imports an I/O module', async () => {
    const file = path.join(dir, 'reads-files.ts');
    await writeFile(
      file,
      "import { readFileSync } from 'node:fs';\nexport async function readsFiles(): Promise<string> { return readFileSync('/etc/hostname', 'utf8'); }\n",
    );
    const { logger, errors } = recordingLogger();
    await expect(bundleWorkflowCode({ workflowsPath: file, logger })).rejects.toThrow('Webpack finished with errors');
    expect(errors.join('\n')).toMatch(/node:fs/);
  });
});
