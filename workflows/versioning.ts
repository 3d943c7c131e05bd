/**
 * Worker Versioning as the workflows use it. It matters only when the worker
 * joins a Worker Deployment (WORKER_DEPLOYMENT_NAME and WORKER_BUILD_ID): an
 * unversioned worker ignores the declared behaviour, never sees the flag set,
 * and a continue-as-new's versioning option changes nothing Temporal compares
 * on replay (the command's kind only), so recorded runs replay as they ran.
 *
 * Imports and nights are pinned: they finish on the release that started them,
 * so a change of their code needs no patch. The ledger and the mapping lock
 * live on; pinned too, they move to the current release by continuing as new
 * as soon as they see one.
 */
import { makeContinueAsNewFunc, type Workflow, workflowInfo } from '@temporalio/workflow';

/** For setWorkflowOptions beside each workflow. */
export const PINNED = { versioningBehavior: 'PINNED' } as const;

/**
 * True once another deployment version is current (or ramping to this run)
 * than the one this pinned run is on. Temporal sets it on the next workflow
 * task after the switch (it does not wake the run); the history records it.
 */
export function newVersionIsCurrent(): boolean {
  return workflowInfo().targetWorkerDeploymentVersionChanged;
}

/**
 * continueAsNew whose next run starts on the current version: a plain one would
 * stay on this run's version, and Temporal would take that as declining the move.
 */
export function continueAsNewOnCurrentVersion<F extends Workflow>(...args: Parameters<F>): Promise<never> {
  return makeContinueAsNewFunc<F>({ initialVersioningBehavior: 'AUTO_UPGRADE' })(...args);
}
