// Opaque keyset cursors for link lists: the sort, the order and the last row's
// (sort value, id). A cursor is only valid with the sort and order it came from.
import { ApiError } from '../../platform/http/errors.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { isDateTime, isUuid } from '../../platform/http/validation.ts';
import { SHORT_ID_PATTERN } from './short-id.ts';

export interface Cursor {
  sort: string;
  order: 'asc' | 'desc';
  value: string;
  id: string;
}

export const encodeCursor = (cursor: Cursor): string => Buffer.from(JSON.stringify(cursor)).toString('base64url');

const invalid = () =>
  new ApiError(400, 'invalid_cursor', 'cursor is not a nextCursor of this list; pass it back unchanged, with the same sort and order.', [{ path: '/cursor', message: 'invalid' }]);

export function decodeCursor(text: string, sort: string, order: 'asc' | 'desc'): Cursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const c = parsed as Partial<Cursor> | null;
  if (!c || typeof c !== 'object' || c.sort !== sort || c.order !== order || typeof c.value !== 'string' || typeof c.id !== 'string') throw invalid();
  if (!isUuid(c.id)) throw invalid();
  const valueOk = sort === 'shortId' ? new RegExp(SHORT_ID_PATTERN).test(c.value) : isDateTime(c.value);
  if (!valueOk) throw invalid();
  return c as Cursor;
}

/**
 * One page of `select` (a query whose rows have created_at and id), newest first, after the row a
 * `nextCursor` of it names. The cursor keeps created_at to the microsecond, as Postgres does, so
 * rows written in the same millisecond are neither skipped nor repeated.
 */
export async function newestFirst<R extends { created_at: Date; id: string }>(
  pg: Pool, select: string, params: readonly unknown[], limit: number, cursorText?: string,
): Promise<{ rows: R[]; nextCursor: string | null }> {
  const values = [...params];
  let after = '';
  if (cursorText) {
    const cursor = decodeCursor(cursorText, 'createdAt', 'desc');
    values.push(cursor.value, cursor.id);
    after = `WHERE (page.created_at, page.id) < ($${values.length - 1}::timestamptz, $${values.length}::uuid)`;
  }
  values.push(limit + 1);
  const { rows } = await pg.query<R & { page_at: string }>(
    `SELECT page.*, to_char(page.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS page_at
       FROM (${select}) page ${after} ORDER BY page.created_at DESC, page.id DESC LIMIT $${values.length}`,
    values,
  );
  const shown = rows.slice(0, limit);
  const last = shown.at(-1);
  return {
    rows: shown.map(({ page_at: _, ...row }) => row as unknown as R),
    nextCursor: rows.length > limit && last ? encodeCursor({ sort: 'createdAt', order: 'desc', value: last.page_at, id: last.id }) : null,
  };
}
