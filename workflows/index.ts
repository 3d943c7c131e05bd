/** The workflow bundle's entry: every workflow the worker registers. */
export { budgetLedger } from './budget-ledger.js';
export { dryRunFeed, dryRunImport } from './dry-run-import.js';
export { importFile } from './import-file.js';
export { jobRecord } from './job-record.js';
export { mappingLock } from './mapping-lock.js';
export { nightlyImport } from './nightly-import.js';
export { sweepBoard } from './sweep-board.js';
