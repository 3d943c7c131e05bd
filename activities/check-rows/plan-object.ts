/**
 * The planning pass over a pinned S3 object, as the planRows activity runs
 * it: the object's size (from the read itself) and a way to read it again
 * from its start, so that a file that goes as it is is read once without
 * cutting parts, and one that turns out not to is read again and cut.
 */
import { type PlanOptions, planRows, type RowPlan } from '../rows/index.js';
import type { S3Source } from '../s3/source.js';

export interface PinnedObject {
  bucket: string;
  key: string;
  etag: string;
}

export async function planObject(
  s3: S3Source,
  object: PinnedObject,
  options: Omit<PlanOptions, 'reopen' | 'sourceBytes'>,
  signal?: AbortSignal,
): Promise<RowPlan> {
  const pinned = { etag: object.etag, signal };
  const source = await s3.readSized(object.bucket, object.key, pinned);
  return planRows(source.body, {
    ...options,
    reopen: () => s3.read(object.bucket, object.key, pinned),
    sourceBytes: source.sizeBytes,
  });
}
