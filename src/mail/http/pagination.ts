// Keyset pages of a mail list, newest first: `?limit=` (1..100, default 20) and
// `?cursor=` (the `next_cursor` of the previous page, opaque). The answer is
// `{ object: "list", data, has_more, next_cursor }`. A cursor names the last row's
// (created_at, id), so rows deleted meanwhile do not break the walk.
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../platform/http/errors.ts';
import type { Pool } from '../../platform/postgres/pool.ts';

export const PageQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Items per page (1 to 100, default 20).' })),
    cursor: Type.Optional(Type.String({ maxLength: 200, description: 'next_cursor of the previous page.' })),
  },
  { additionalProperties: false },
);

export interface Page<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** The list envelope's schema around items of `item`. */
export const PageOf = (item: ReturnType<typeof Type.Object> | ReturnType<typeof Type.Unsafe>, id: string) =>
  Type.Object({ object: Type.Literal('list'), data: Type.Array(item), has_more: Type.Boolean(), next_cursor: Type.Union([Type.String(), Type.Null()]) }, { $id: id, title: id });

const invalidCursor = () => new ApiError(400, 'invalid_cursor', 'cursor is not a next_cursor of this list; pass it back unchanged.', [{ path: '/cursor', message: 'invalid' }]);

function decodeCursor(cursor: string): [string, string] {
  const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (!at || !id || Number.isNaN(Date.parse(at)) || !/^[0-9a-f-]{36}$/.test(id)) throw invalidCursor();
  return [at, id];
}

const encodeCursor = (createdAt: Date, id: string) => Buffer.from(`${createdAt.toISOString()}|${id}`).toString('base64url');

export interface PageRequest {
  /** `SELECT … FROM <table> t WHERE <where>`: the query without ordering, whose rows have `created_at` and `id`. Its own parameters are `params`. */
  select: string;
  params: unknown[];
  limit?: number;
  cursor?: string;
}

/** Runs one page of `select`, newest first. */
export async function page<R extends { created_at: Date; id: string }, T>(pg: Pool, request: PageRequest, map: (row: R) => T): Promise<Page<T>> {
  const limit = request.limit ?? 20;
  const params = [...request.params];
  let sql = `SELECT * FROM (${request.select}) page`;
  if (request.cursor) {
    const [at, id] = decodeCursor(request.cursor);
    params.push(at, id);
    sql += ` WHERE (page.created_at, page.id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`;
  }
  params.push(limit + 1);
  sql += ` ORDER BY page.created_at DESC, page.id DESC LIMIT $${params.length}`;
  const { rows } = await pg.query<R>(sql, params);
  const more = rows.length > limit;
  const shown = more ? rows.slice(0, limit) : rows;
  const last = shown.at(-1);
  return { object: 'list', data: shown.map(map), has_more: more, next_cursor: more && last ? encodeCursor(last.created_at, last.id) : null };
}
