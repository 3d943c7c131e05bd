/**
 * The custom-source field-mapping endpoints: PUT replaces the whole set for a
 * source and object type (201, no body), GET reads it. Errors carry
 * `{error: {code, message, diagnosticCode}}`, as on the production paths.
 */
import { MAPPING_OBJECT_TYPES } from '../../workflows/contracts/import-input.js';
import { mappingError } from './error-bodies.js';
import { json, parseJson, type Reply, readSmallBody } from './http-io.js';
import type { RouteContext } from './route-context.js';

const MAPPING_FIELDS = ['sourceFieldLabel', 'serviceFieldName', 'dataType'] as const;

export async function getFieldMappings(ctx: RouteContext): Promise<Reply> {
  const problem = pathProblem(ctx);
  if (problem) return problem;
  const [sourceId, objectType] = ctx.params as [string, string];
  return json(200, { fieldMappings: ctx.store.fieldMappings(sourceId, objectType) ?? [] });
}

export async function putFieldMappings(ctx: RouteContext): Promise<Reply> {
  const problem = pathProblem(ctx);
  if (problem) return problem;
  const [sourceId, objectType] = ctx.params as [string, string];
  const body = await readSmallBody(ctx.req, 8 * 1024 * 1024);
  if ('tooLarge' in body) return mappingError(400, 'request body is too large for a field-mapping set');
  const input = parseJson(body.text) as { fieldMappings?: unknown } | undefined;
  if (typeof input !== 'object' || input === null || !Array.isArray(input.fieldMappings)) {
    return mappingError(400, 'request body must be a JSON object {"fieldMappings": [...]}');
  }
  for (const [index, item] of input.fieldMappings.entries()) {
    const itemProblem = mappingItemProblem(item);
    if (itemProblem) return mappingError(400, `fieldMappings[${index}]: ${itemProblem}`);
  }
  ctx.store.setFieldMappings(sourceId, objectType, input.fieldMappings);
  return { status: 201 };
}

function pathProblem(ctx: RouteContext): Reply | undefined {
  const [sourceId, objectType] = ctx.params as [string, string];
  if (!(MAPPING_OBJECT_TYPES as readonly string[]).includes(objectType)) {
    return mappingError(
      400,
      `object_type must be one of ${MAPPING_OBJECT_TYPES.join(', ')}, got ${JSON.stringify(objectType)}`,
    );
  }
  if (!/^\d+$/.test(sourceId))
    return mappingError(400, `source_id must be an integer, got ${JSON.stringify(sourceId)}`);
  if (!ctx.store.isKnownSource(sourceId)) return mappingError(404, `Custom source ${sourceId} not found`);
  return undefined;
}

function mappingItemProblem(item: unknown): string | undefined {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return 'each mapping must be an object';
  for (const field of MAPPING_FIELDS) {
    const value = (item as Record<string, unknown>)[field];
    if (typeof value !== 'string' || value.trim() === '') {
      return `${field} must be a non-empty string, got ${JSON.stringify(value)}`;
    }
  }
  return undefined;
}
