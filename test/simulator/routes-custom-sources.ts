/**
 * The custom-source endpoints: one source by id, and the tenant's sources a
 * page at a time (`group=custom`). A source's name is what an import job's
 * `source` names to read its header through that source's field mappings.
 * Errors carry `{error: {code, message, diagnosticCode}}`, as on the other
 * integration paths.
 */
import { mappingError } from './error-bodies.js';
import { json, type Reply } from './http-io.js';
import type { RouteContext } from './route-context.js';
import type { CustomSource } from './types.js';

/** The only group the simulator's sources belong to. */
const CUSTOM_GROUP = 'custom';
const DEFAULT_PRIORITY = 50;

export async function getCustomSource(ctx: RouteContext): Promise<Reply> {
  const [sourceId] = ctx.params as [string];
  if (!/^\d{1,19}$/.test(sourceId)) {
    return mappingError(400, `source_id must be an integer, got ${JSON.stringify(sourceId)}`);
  }
  const source = ctx.store.customSource(sourceId);
  return source ? json(200, publicSource(source)) : mappingError(404, `Custom source ${sourceId} not found`);
}

export async function listCustomSources(ctx: RouteContext): Promise<Reply> {
  const q = ctx.url.searchParams;
  const group = q.get('group');
  if (group !== null && group !== CUSTOM_GROUP) {
    return mappingError(400, `group must be ${CUSTOM_GROUP}, got ${JSON.stringify(group)}`);
  }
  const page = positiveInt(q.get('page'), 1);
  const perPage = positiveInt(q.get('perPage'), 20);
  if (page === undefined || perPage === undefined || perPage > 100) {
    return mappingError(400, 'page must be an integer >= 1 and perPage an integer from 1 to 100');
  }
  const sources = ctx.store.customSources();
  const data = sources.slice((page - 1) * perPage, page * perPage).map(publicSource);
  return json(200, { totalCount: sources.length, data });
}

/** A source as the API shows it; the id is a bigint so that it goes out as a bare JSON number however large. */
function publicSource(source: CustomSource): Record<string, unknown> {
  return {
    id: BigInt(source.id),
    name: source.name,
    description: source.description ?? '',
    sourceGroup: CUSTOM_GROUP,
    priority: source.priority ?? DEFAULT_PRIORITY,
  };
}

function positiveInt(raw: string | null, fallback: number): number | undefined {
  if (raw === null) return fallback;
  if (!/^\d+$/.test(raw)) return undefined;
  const n = Number(raw);
  return n >= 1 ? n : undefined;
}
