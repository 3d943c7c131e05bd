/**
 * Minimal checks of successful response bodies: the fields the worker relies
 * on must be there with the right types; anything extra is kept. A 200 that
 * fails them is reported as a ServerError naming the first problem.
 */
import { z } from 'zod';
import type { FieldMapping } from '../../workflows/policy/import-input.js';
import type { ActivityFields, ActivityType, ImportJob, ImportJobList } from './types.js';

const importJob = z.looseObject({
  id: z.number().int(),
  dataImportName: z.string(),
  entityType: z.string(),
  state: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  source: z.string().nullish(),
  activityTypeId: z.number().int().nullish(),
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
  importJob: { describes: 'an import job object', schema: importJob as z.ZodType<ImportJob> },
  importJobList: {
    describes: 'a job list { totalCount, data: [job] }',
    schema: z.looseObject({ totalCount: z.number().int(), data: z.array(importJob) }) as z.ZodType<ImportJobList>,
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
