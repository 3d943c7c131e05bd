/**
 * Every Update, Signal and Query the workflows handle, defined once with its
 * types. The workflows register handlers for these definitions and every
 * caller (budget gate, mapping-lock activity, CLI, tests) sends them, so the
 * compiler checks both sides. The names are part of recorded histories and
 * of what operators type in the Temporal UI: never change them.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  AllowanceRequest,
  AllowanceResult,
  ClearExhaustedSignal,
  DailyLimitAnswer,
  DailyLimitReport,
  ExhaustedSignal,
  LedgerUsage,
  ReserveRequest,
  ReserveResult,
} from './budget.js';
import type { ImportProgress } from './import-workflow.js';
import type {
  ClaimCreateAnswer,
  ClaimRequest,
  ClaimUploadAnswer,
  ClaimUploadRequest,
  ConfirmAnswer,
  ConfirmRequest,
  JobRecordView,
  NoteJobStateRequest,
  ResolveCreateAnswer,
  ResolveCreateRequest,
  SupersedeRequest,
  UploadEndedRequest,
} from './job-record.js';
import type {
  AcquireMappingLockAnswer,
  AcquireMappingLockRequest,
  MappingLockHolder,
  ReleaseMappingLockSignal,
} from './mapping-lock.js';
import type { NightlyProgress } from './nightly.js';
import type { ClaimSweepRequest, PublishSweepRequest, SweepBoardView, SweepLease } from './sweep-board.js';

// The budget ledger (budgetLedger, one per tenant).

/** Grants one call on an endpoint, or answers when the window resets; the request id is also the Update id. */
export const reserveUpdate = defineUpdate<ReserveResult, [ReserveRequest]>('reserve');
/** Grants a worker process several calls at once to spend on its own, and takes back what earlier ones left. */
export const allowanceUpdate = defineUpdate<AllowanceResult, [AllowanceRequest]>('reserveAllowance');
/** Gives back a grant whose call never reached the service (refused connection, DNS failure). */
export const releaseUpdate = defineUpdate<void, [ReserveRequest]>('release');
/** A worker's report of the service's daily-limit 429; answers how long the endpoint stays blocked. */
export const dailyLimitUpdate = defineUpdate<DailyLimitAnswer, [DailyLimitReport]>('dailyLimitReached');
/** An operator's block of one endpoint until an instant (a later block than one already known wins). */
export const exhaustedSignal = defineSignal<[ExhaustedSignal]>('exhausted');
/** An operator's way out of a block set by mistake: `{ endpoint }` clears one endpoint, `{}` all of them. */
export const clearExhaustedSignal = defineSignal<[ClearExhaustedSignal]>('clearExhausted');
/** Used, limit and remaining calls per endpoint in the current window. */
export const usageQuery = defineQuery<LedgerUsage>('usage');

// The import (importFile).

/** Where the import is: phase, job, waits, last error. */
export const progressQuery = defineQuery<ImportProgress>('progress');
/** Re-runs the step that failed, after an operator fixed the cause (onFailure 'await-retry'). */
export const retrySignal = defineSignal('retry');
/** Gives up on a failed step: the workflow fails with the step's error. */
export const abandonSignal = defineSignal('abandon');

// The nightly run (nightlyImport, one per feed and night).

/** The night's tally so far and the imports it runs now (a query leaves no trace in history). */
export const nightlyProgressQuery = defineQuery<NightlyProgress>('nightlyProgress');

// The mapping lock (mappingLock, one per custom source and object type).

/** Takes the lock for an import, or answers who holds it with another set. */
export const acquireMappingLockUpdate = defineUpdate<AcquireMappingLockAnswer, [AcquireMappingLockRequest]>('acquire');
/** An import that ends gives the lock back. */
export const releaseMappingLockSignal = defineSignal<[ReleaseMappingLockSignal]>('release');
export const mappingLockHoldersQuery = defineQuery<MappingLockHolder[]>('holders');

// The job record (jobRecord, one per object version); reached by activities only, with update-with-start.

/** Which job the version has, or may this attempt create it (create), search for it (resolve), or follow (wait). */
export const claimCreateUpdate = defineUpdate<ClaimCreateAnswer, [ClaimRequest]>('claimCreate');
/** The fence: granted only to the attempt that owns the intent; a lease for sending the last bytes. */
export const confirmUpdate = defineUpdate<ConfirmAnswer, [ConfirmRequest]>('confirm');
/** The job a create made or a settled search found; or that the search found none (a fresh intent). */
export const resolveCreateUpdate = defineUpdate<ResolveCreateAnswer, [ResolveCreateRequest]>('resolveCreate');
/** May this attempt upload the job's file (send, after settleMs), or is it in (done), or does another import upload it (wait). */
export const claimUploadUpdate = defineUpdate<ClaimUploadAnswer, [ClaimUploadRequest]>('claimUpload');
/** The owner's upload ended without an answer: whether its last bytes had left. */
export const uploadEndedUpdate = defineUpdate<void, [UploadEndedRequest]>('uploadEnded');
/** What the service said of the job: out of `new` it holds the file; `completed` closes the record; `failed` forgets the job. */
export const noteJobStateUpdate = defineUpdate<JobRecordView, [NoteJobStateRequest]>('noteJobState');
/** The import moved on to a newer version of the object: what it owned here may be taken over. */
export const supersedeUpdate = defineUpdate<void, [SupersedeRequest]>('supersede');
/** The record as its view: job, failed jobs, open intents. */
export const jobRecordQuery = defineQuery<JobRecordView>('jobRecord');

/** The sweep board (sweep-board.ts): claim a round, publish what it listed, read the latest sweeps. */
export const claimSweepUpdate = defineUpdate<SweepLease, [ClaimSweepRequest]>('claimSweep');
export const publishSweepUpdate = defineUpdate<number, [PublishSweepRequest]>('publishSweep');
export const sweepBoardQuery = defineQuery<SweepBoardView>('sweepBoard');
