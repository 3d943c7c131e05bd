/**
 * Worker Versioning as the workflows use it. It matters only when the worker
 * joins a Worker Deployment (WORKER_DEPLOYMENT_NAME and WORKER_BUILD_ID).
 *
 * Every workflow here is pinned, by the worker's default behaviour
 * (run-worker.ts), not by setWorkflowOptions: the server refuses a workflow
 * task that names a behaviour from an unversioned worker, so a declaration
 * beside the workflow would stop every unversioned worker.
 *
 * Imports and nights finish on the release that started them, so a change of
 * their code needs no patch. The ledger and the mapping lock live on; they
 * move to the current release by continuing as new as soon as they see one.
 * Unversioned, the flag below is never set and continue-as-new is the plain
 * one, so recorded runs replay as they ran and new runs run as before.
 */
import { makeContinueAsNewFunc, type Workflow, workflowInfo } from '@temporalio/workflow';

/**
 * True once another deployment version is current (or ramping to this run)
 * than the one this pinned run is on. Temporal sets it on the next workflow
 * task after the switch (it does not wake the run); the history records it.
 */
export function newVersionIsCurrent(): boolean {
  return workflowInfo().targetWorkerDeploymentVersionChanged;
}

/**
 * continueAsNew whose next run starts on the current version. A plain one
 * would stay on this run's version, and Temporal would take that as declining
 * the move, even when this run had not yet seen the flag. Unversioned, the
 * plain one: the option means nothing there.
 */
export function continueAsNewOnCurrentVersion<F extends Workflow>(...args: Parameters<F>): Promise<never> {
  const versioned = workflowInfo().currentDeploymentVersion !== undefined;
  return makeContinueAsNewFunc<F>(versioned ? { initialVersioningBehavior: 'AUTO_UPGRADE' } : undefined)(...args);
}
