/**
 * The service has no idempotency key, so a job carries one in its name:
 * "<dataImportName> [import:<key>]", the key derived from the workflow id
 * (never the run id), so a lost create response, a retry and an operator's
 * Reset all find the job this workflow already created.
 */
const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK_64 = 0xffffffffffffffffn;

/** 64-bit FNV-1a of the UTF-8 bytes, 16 hex digits. Pure, so it runs in the workflow sandbox. */
export function fnv1a64(text: string): string {
  let hash = FNV_OFFSET;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= BigInt(byte);
    hash = (hash * FNV_PRIME) & MASK_64;
  }
  return hash.toString(16).padStart(16, '0');
}

export function jobKeyForWorkflow(workflowId: string): string {
  return fnv1a64(`importFile:${workflowId}`);
}

export function jobNameWithKey(dataImportName: string, jobKey: string): string {
  return `${dataImportName} [import:${jobKey}]`;
}

export function jobNameHasKey(jobName: string, jobKey: string): boolean {
  return jobName.endsWith(`[import:${jobKey}]`);
}
