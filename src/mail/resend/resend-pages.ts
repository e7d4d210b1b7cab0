// Lists at Resend's root paths page as Resend's do: `limit` (1..100, default 20),
// and `after` or `before` naming an item of a previous page. `after` gives the
// items older than it, `before` the newer ones nearest to it, both newest first;
// `has_more` says whether more lie beyond in that direction. An item is placed by
// (created_at, id), as Postgres keeps them, so rows written by one statement are
// each seen once. An id that names no item of the list is 400 invalid_cursor.
import { Type, type TSchema } from '@sinclair/typebox';
import { ApiError } from '../../platform/http/errors.ts';
import { isUuid } from '../../platform/http/validation.ts';
import type { Pool } from '../../platform/postgres/pool.ts';

const Cursor = (description: string) => Type.Optional(Type.String({ maxLength: 200, description }));

export const ResendPageQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Items per page (1 to 100, default 20).' })),
    after: Cursor('The id of an item: the page after it (older items).'),
    before: Cursor('The id of an item: the page before it (newer items).'),
  },
  { additionalProperties: false },
);
export type ResendPageRequest = { limit?: number; after?: string; before?: string };

export interface ResendList<T> {
  object: 'list';
  has_more: boolean;
  data: T[];
}

/** The list envelope's schema around items of `item`, named `id`. */
export const ResendListOf = (item: TSchema, id: string) =>
  Type.Object({ object: Type.Literal('list'), has_more: Type.Boolean(), data: Type.Array(item) }, { $id: id, title: id });

const invalidCursor = (param: string) => new ApiError(400, 'invalid_cursor', `${param} is not the id of an item of this list.`, [{ path: `/${param}`, message: 'not an item of this list' }]);

/**
 * One page of `select` (a query whose rows have `created_at` and a uuid `id`, with its own
 * `params`), newest first.
 */
export async function resendPage<R extends { created_at: Date; id: string }, T>(
  pg: Pool, query: { select: string; params: unknown[] }, request: ResendPageRequest, map: (row: R) => T,
): Promise<ResendList<T>> {
  const { after, before } = request;
  const limit = request.limit ?? 20;
  if (after !== undefined && before !== undefined) throw new ApiError(400, 'both_cursors', 'Give after or before, not both.', [{ path: '/before', message: 'not with after' }]);
  const param = after !== undefined ? 'after' : before !== undefined ? 'before' : undefined;
  const cursor = after ?? before;
  const params = [...query.params];
  let where = 'true';
  if (param && cursor !== undefined) {
    if (!isUuid(cursor)) throw invalidCursor(param);
    const { rows } = await pg.query(`SELECT 1 FROM (${query.select}) page WHERE page.id = $${params.length + 1}::uuid`, [...params, cursor]);
    if (rows.length === 0) throw invalidCursor(param);
    params.push(cursor);
    where = `(page.created_at, page.id) ${param === 'after' ? '<' : '>'} (SELECT c.created_at, c.id FROM (${query.select}) c WHERE c.id = $${params.length}::uuid)`;
  }
  // `before` walks towards the newest: nearest first, then turned round.
  const order = param === 'before' ? 'ASC' : 'DESC';
  params.push(limit + 1);
  const { rows } = await pg.query<R>(`SELECT page.* FROM (${query.select}) page WHERE ${where} ORDER BY page.created_at ${order}, page.id ${order} LIMIT $${params.length}`, params);
  const shown = rows.slice(0, limit);
  return { object: 'list', has_more: rows.length > limit, data: (param === 'before' ? shown.reverse() : shown).map(map) };
}
