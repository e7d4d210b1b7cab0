// Keyset pages of a mail list, newest first: `?limit=` (1..100, default 20) and
// `?cursor=` (the `next_cursor` of the previous page, opaque). The answer is
// `{ object: "list", data, has_more, next_cursor }`. A cursor names the last row's
// (created_at, id), so rows deleted meanwhile do not break the walk.
//
// The cursor keeps created_at to the microsecond, as Postgres stores it: rows
// written by one statement (an import batch) share one now(), so a cursor of
// rounder time would skip or repeat them. The microseconds since the epoch are
// worked out in SQL and turned back into a timestamp there with integer steps
// only (no float on the way), and the id breaks ties.
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

/** A cursor's created_at as SQL text and its id. Today's cursors carry epoch microseconds; older ones an ISO time (milliseconds), still accepted. */
function decodeCursor(cursor: string): { micros: string | null; iso: string | null; id: string } {
  const [at, id, extra] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (!at || !id || extra !== undefined || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)) throw invalidCursor();
  // At most 17 digits: microseconds until the year 5138, and well inside bigint.
  if (/^[0-9]{1,17}$/.test(at)) return { micros: at, iso: null, id };
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(at) && !Number.isNaN(Date.parse(at))) return { micros: null, iso: at, id };
  throw invalidCursor();
}

const encodeCursor = (micros: string, id: string) => Buffer.from(`${micros}|${id}`).toString('base64url');

/** created_at as whole microseconds since the epoch: whole seconds, then the microseconds within the second (exact whether extract answers numeric or, before Postgres 14, double). */
const MICROS = "(extract(epoch FROM date_trunc('second', page.created_at))::bigint * 1000000 + extract(microseconds FROM page.created_at)::bigint % 1000000)";
/** The timestamp of $n microseconds since the epoch: whole seconds and the rest apart, so each multiplication stays exact. */
const fromMicros = (n: number) => `(timestamptz 'epoch' + ($${n}::bigint / 1000000) * interval '1 second' + ($${n}::bigint % 1000000) * interval '1 microsecond')`;

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
  let sql = `SELECT page.*, ${MICROS}::text AS page_cursor_micros FROM (${request.select}) page`;
  if (request.cursor) {
    const { micros, iso, id } = decodeCursor(request.cursor);
    params.push(micros ?? iso, id);
    const at = micros !== null ? fromMicros(params.length - 1) : `$${params.length - 1}::timestamptz`;
    sql += ` WHERE (page.created_at, page.id) < (${at}, $${params.length}::uuid)`;
  }
  params.push(limit + 1);
  sql += ` ORDER BY page.created_at DESC, page.id DESC LIMIT $${params.length}`;
  const { rows } = await pg.query<R & { page_cursor_micros: string }>(sql, params);
  const more = rows.length > limit;
  const shown = more ? rows.slice(0, limit) : rows;
  const last = shown.at(-1);
  const data = shown.map(({ page_cursor_micros: _, ...row }) => map(row as unknown as R));
  return { object: 'list', data, has_more: more, next_cursor: more && last ? encodeCursor(last.page_cursor_micros, last.id) : null };
}
