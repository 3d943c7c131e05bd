/**
 * The sweep board of one tenant, as an entity workflow (contracts/sweep-board.ts):
 * worker processes claim a sweep round, publish what they listed, and read
 * the latest sweeps with a query. A refused claim is refused by the
 * validator, so it writes nothing to the history. It continues as new when
 * its history grows, carrying the latest sweeps and the lease, and on the
 * current release as soon as it learns one is (versioning.ts). Temporal tells
 * a pinned run of a new current release only on its next workflow task, so
 * on a Worker Deployment an idle board wakes every `releaseCheckMs` to ask:
 * a tenant with nothing to sweep does not keep an old release from draining.
 */
import { allHandlersFinished, condition, setHandler, workflowInfo } from '@temporalio/workflow';
import { claimSweepUpdate, publishSweepUpdate, sweepBoardQuery } from './contracts/messages.js';
import { SWEEP_BOARD_MAX_HISTORY_EVENTS, type SweepBoardInput, type SweepLease } from './contracts/sweep-board.js';
import { claim, claimProblem, emptyBoard, publish, publishProblem } from './sweep-board-state.js';
import { continueAsNewOnCurrentVersion, newVersionIsCurrent } from './versioning.js';

export async function sweepBoard(input: SweepBoardInput): Promise<never> {
  let view = input.view ?? emptyBoard();
  const maxHistoryEvents = input.maxHistoryEvents ?? SWEEP_BOARD_MAX_HISTORY_EVENTS;
  setHandler(
    claimSweepUpdate,
    (request): SweepLease => {
      view = claim(view, request, Date.now());
      return view.lease as SweepLease;
    },
    {
      validator: (request) => {
        const problem = claimProblem(view, request);
        if (problem) throw new Error(problem);
      },
    },
  );
  setHandler(
    publishSweepUpdate,
    (request) => {
      view = publish(view, request);
      return view.seq;
    },
    {
      validator: (request) => {
        const problem = publishProblem(request);
        if (problem) throw new Error(problem);
      },
    },
  );
  setHandler(sweepBoardQuery, () => view);

  const runIsOver = () =>
    workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > maxHistoryEvents || newVersionIsCurrent();
  const versioned = workflowInfo().currentDeploymentVersion !== undefined;
  if (versioned && input.releaseCheckMs !== undefined) {
    while (!(await condition(runIsOver, input.releaseCheckMs))) {
      // Woke to let Temporal say whether another release is current now.
    }
  } else {
    await condition(runIsOver);
  }
  await condition(allHandlersFinished);
  return continueAsNewOnCurrentVersion<typeof sweepBoard>({ ...input, view, maxHistoryEvents });
}
