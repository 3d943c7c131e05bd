/** `import-worker retry|abandon <workflowId>`: the operator's answer to an import waiting after a failure. */

import { loadTemporalConfig } from '../../temporal.config.js';
import type { abandonSignal, retrySignal } from '../../workflows/contracts/messages.js';
import { CliError } from './cli-error.js';
import { type CliContext, withClient } from './context.js';
import { queryProgress } from './import-progress.js';

type OperatorSignal = typeof retrySignal | typeof abandonSignal;

export async function signalCommand(signal: OperatorSignal, workflowId: string, ctx: CliContext): Promise<void> {
  await withClient(ctx, loadTemporalConfig(ctx.env), async ({ client }) => {
    const handle = client.workflow.getHandle(workflowId);
    const description = await handle.describe();
    if (description.status.name !== 'RUNNING') {
      throw new CliError(
        `workflow ${workflowId} is ${description.status.name}, not running: nothing to ${signal.name}`,
      );
    }
    const progress = await queryProgress(handle);
    if (progress && !progress.awaitingRetry) {
      ctx.warn(
        `warning: ${workflowId} is not waiting for an operator (phase ${progress.phase}); the signal is sent anyway`,
      );
    }
    await handle.signal(signal);
    ctx.print(`sent ${signal.name} to ${workflowId}`);
  });
}
