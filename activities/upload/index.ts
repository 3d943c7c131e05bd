/**
 * The upload of one object version's bytes into its job (uploadData): the
 * activity (upload-data.ts) and its idle watchdog. Only the activity's
 * factory leaves the folder.
 */
export { makeUploadData, type UploadDataDeps } from './upload-data.js';
