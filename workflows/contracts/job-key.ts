/**
 * The service has no idempotency key, so a job carries one in its name:
 * "[import:<key>] <dataImportName>". The key sits at the start, where a
 * service that shortens long names cannot cut it, and the whole name is kept
 * within JOB_NAME_MAX_LENGTH.
 *
 * The key names one import of one file version: a hash of its scope and the
 * file's ETag. The default scope is the execution chain (workflow id and the
 * first execution's run id): a lost create response, a retried attempt and an
 * operator's Reset (which keeps the first run id) find the job again, while a
 * fresh start under the same workflow id is a new import with a new job. A
 * caller that means "the same import" across executions (the nightly feed,
 * whose child ids are derived from the object version) passes a `jobScope`.
 */
const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK_64 = 0xffffffffffffffffn;

/** The longest job name this worker sends; the service publishes no limit. */
export const JOB_NAME_MAX_LENGTH = 200;

/** 64-bit FNV-1a of the UTF-8 bytes, 16 hex digits. Pure, so it runs in the workflow sandbox. */
export function fnv1a64(text: string): string {
  let hash = FNV_OFFSET;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= BigInt(byte);
    hash = (hash * FNV_PRIME) & MASK_64;
  }
  return hash.toString(16).padStart(16, '0');
}

/** The default scope: this execution and its Resets, never a later fresh start. */
export function executionJobScope(workflowId: string, firstExecutionRunId: string): string {
  return `${workflowId}/${firstExecutionRunId}`;
}

/** The key of the job that imports the file version `etag` within `scope`. */
export function jobKeyFor(scope: string, etag: string): string {
  return fnv1a64(`importFile\n${scope}\n${etag}`);
}

function keyTag(jobKey: string): string {
  return `[import:${jobKey}]`;
}

export function jobNameWithKey(dataImportName: string, jobKey: string): string {
  const name = `${keyTag(jobKey)} ${dataImportName}`;
  if (name.length <= JOB_NAME_MAX_LENGTH) return name;
  // By code points, so that a cut never splits a surrogate pair.
  const chars = Array.from(name);
  let kept = '';
  for (const c of chars) {
    if (kept.length + c.length > JOB_NAME_MAX_LENGTH - 1) break;
    kept += c;
  }
  return `${kept}…`;
}

/** True for a name this worker gave the job of `jobKey`, also when the service shortened it after the key. */
export function jobNameHasKey(jobName: string | undefined, jobKey: string): boolean {
  return jobName?.trimStart().startsWith(keyTag(jobKey)) ?? false;
}
