/** The workflow bundle's entry: every workflow the worker registers. */
export { budgetLedger } from './budget-ledger.js';
export { importFile } from './import-file.js';
// nightlyImport (workflows/nightly-import.ts) is exported here by its author:
// export { nightlyImport } from './nightly-import.js';
