/**
 * Minimal checks of successful response bodies: only the fields the worker
 * relies on must be there with the right types (the service's reference marks
 * none of a job's fields required); anything extra is kept. A 200 that fails
 * them is reported as an UnusableResponse naming the first problem. Job ids
 * are int64: they come out as decimal strings, exact above 2^53 (the client
 * parses with parseJsonExact, which hands such numbers over as strings).
 */
import { z } from 'zod';
import type { FieldMapping } from '../../workflows/contracts/import-input.js';
import type { ActivityFields, ActivityType, CreatedJob, CustomSource, ImportJob, ImportJobList } from './types.js';

/** An int64 id as JSON gives it: a safe integer, or the decimal string parseJsonExact made of a larger one. */
const int64Id = z
  .union([z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER), z.string().regex(/^[0-9]{1,19}$/)])
  .transform((id) => String(id))
  .refine((id) => BigInt(id) <= 2n ** 63n - 1n, 'an int64 id');

const optionalText = z
  .string()
  .nullish()
  .transform((v) => v ?? undefined);

/** A job read by id or returned by an upload: its state is what the caller acts on. */
const importJob = z.looseObject({
  id: int64Id,
  state: z.string(),
  dataImportName: optionalText,
  entityType: optionalText,
  createdAt: optionalText,
  updatedAt: optionalText,
  source: optionalText,
  activityTypeId: z.number().int().nullish(),
});

/**
 * A created job should be `new` (spec), but an answer without a state says
 * nothing: the caller reads the job again rather than assume.
 */
const createdJob = importJob.extend({ state: optionalText });

/** A job in a list: without an id it cannot be used, and it is left out; without a state its state is unknown. */
const listedJob = importJob.extend({ state: optionalText });
const listEntry = z.unknown().transform((entry) => {
  const parsed = listedJob.safeParse(entry);
  return parsed.success ? parsed.data : undefined;
});

const fieldMapping = z.looseObject({
  sourceFieldLabel: z.string(),
  serviceFieldName: z.string(),
  dataType: z.string(),
});

export interface Shape<T> {
  /** What the body should be, for the error message. */
  describes: string;
  schema: z.ZodType<T>;
}

export const shapes = {
  importJob: { describes: 'an import job object { id, state }', schema: importJob as z.ZodType<ImportJob> },
  createdJob: { describes: 'the created import job { id }', schema: createdJob as z.ZodType<CreatedJob> },
  importJobList: {
    describes: 'a job list { data: [job] }',
    // totalCount is optional and unreliable (service-facts.md): a hint, checked by whoever reads it.
    schema: z.looseObject({ data: z.array(listEntry), totalCount: z.unknown().optional() }).transform((list) => ({
      data: list.data.filter((job) => job !== undefined),
      ...(typeof list.totalCount === 'number' && Number.isInteger(list.totalCount) && list.totalCount >= 0
        ? { totalCount: list.totalCount }
        : {}),
    })) as z.ZodType<ImportJobList>,
  },
  sources: {
    describes: 'a source list { data: [string] }',
    schema: z.looseObject({ data: z.array(z.string()) }).transform((b) => b.data),
  },
  activityTypes: {
    describes: 'an array of activity types [{ id, name }]',
    schema: z.array(
      z.looseObject({
        id: z.number().int(),
        name: z.string(),
        description: z.string().optional(),
        activitySource: z.string().optional(),
      }),
    ) as z.ZodType<ActivityType[]>,
  },
  activityFields: {
    describes: 'activity fields { activityType, fields: [{ fieldName, fieldDataType }] }',
    schema: z.looseObject({
      activityType: z.looseObject({ name: z.string() }),
      fields: z.array(z.looseObject({ fieldName: z.string(), fieldDataType: z.string() })),
    }) as z.ZodType<ActivityFields>,
  },
  customSource: {
    describes: 'a custom source { id, name }',
    schema: z.looseObject({ id: int64Id, name: z.string().trim().min(1) }) as z.ZodType<CustomSource>,
  },
  fieldMappings: {
    describes: 'a mapping set { fieldMappings: [{ sourceFieldLabel, serviceFieldName, dataType }] }',
    schema: z.looseObject({ fieldMappings: z.array(fieldMapping) }).transform((b) => b.fieldMappings as FieldMapping[]),
  },
} satisfies Record<string, Shape<unknown>>;

/** The body as T, or the first problem with it as "expected ...; field: what was wrong". */
export function checkShape<T>(shape: Shape<T>, body: unknown): { value: T } | { problem: string } {
  const parsed = shape.schema.safeParse(body);
  if (parsed.success) return { value: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
  return { problem: `expected ${shape.describes}; ${where}${issue?.message ?? 'invalid'}` };
}
