/**
 * The service has no idempotency key, so a job carries one in its name:
 * "[import:<key>] <dataImportName>". The key sits at the start, where a
 * service that shortens long names cannot cut it, and the whole name is kept
 * within JOB_NAME_MAX_LENGTH.
 *
 * The key names one create intent of one object version's job record
 * (job-record-state.ts): a create whose answer was lost is found by it.
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
