// Opaque keyset cursors for link lists: the sort, the order and the last row's
// (sort value, id). A cursor is only valid with the sort and order it came from.
import { ApiError } from '../../platform/http/errors.ts';
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
