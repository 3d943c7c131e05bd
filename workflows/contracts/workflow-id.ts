/**
 * Temporal's limit on a workflow id: 1,000 bytes of UTF-8 (the server counts
 * bytes, so 400 characters of CJK text are already too long). An id past it is
 * refused at the edge, before any call, with the limit named, rather than by
 * the server in the middle of an import.
 */

export const MAX_WORKFLOW_ID_BYTES = 1_000;

/** Why `id` cannot name a workflow, or undefined when it can. */
export function workflowIdProblem(id: string): string | undefined {
  if (id.trim() === '') return 'must not be empty';
  const bytes = new TextEncoder().encode(id).byteLength;
  if (bytes <= MAX_WORKFLOW_ID_BYTES) return undefined;
  return `is ${bytes} bytes in UTF-8; Temporal takes workflow ids of at most ${MAX_WORKFLOW_ID_BYTES.toLocaleString('en-US')} bytes`;
}
