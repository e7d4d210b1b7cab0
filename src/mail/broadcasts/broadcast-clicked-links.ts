// The links of a broadcast's messages that people clicked (Resend's
// broadcasts.clickedLinks): each URL with its clicks and the messages that
// clicked it, from the click events a person made (a machine's, flagged
// automated, are not counted, as in the report's top links). Most clicked
// first; a page goes on after or before an item's `id`, an opaque name of
// its URL.
import { ApiError } from '../../platform/http/errors.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { ResendList, ResendPageRequest } from '../resend/resend-pages.ts';

export interface ClickedLink {
  id: string;
  url: string;
  clicks: number;
  unique_clicks: number;
}

const idOf = (url: string) => Buffer.from(url).toString('base64url');

export async function clickedLinks(pg: Pool, broadcastId: string, request: ResendPageRequest): Promise<ResendList<ClickedLink>> {
  const { rows } = await pg.query<{ url: string; clicks: string; unique_clicks: string }>(
    `SELECT e.url, count(*) AS clicks, count(DISTINCT e.message_id) AS unique_clicks
       FROM mail_broadcast_recipients r JOIN mail_events e ON e.message_id = r.message_id
      WHERE r.broadcast_id = $1 AND e.type = 'clicked' AND NOT e.automated AND e.url IS NOT NULL
      GROUP BY e.url ORDER BY count(*) DESC, e.url`,
    [broadcastId],
  );
  const links = rows.map((r) => ({ id: idOf(r.url), url: r.url, clicks: Number(r.clicks), unique_clicks: Number(r.unique_clicks) }));
  const limit = request.limit ?? 20;
  const cursor = request.after ?? request.before;
  if (request.after !== undefined && request.before !== undefined) throw new ApiError(400, 'both_cursors', 'Give after or before, not both.', [{ path: '/before', message: 'not with after' }]);
  if (cursor === undefined) return { object: 'list', has_more: links.length > limit, data: links.slice(0, limit) };
  const at = links.findIndex((l) => l.id === cursor);
  const param = request.after !== undefined ? 'after' : 'before';
  if (at < 0) throw new ApiError(400, 'invalid_cursor', `${param} is not the id of an item of this list.`, [{ path: `/${param}`, message: 'not an item of this list' }]);
  if (param === 'after') return { object: 'list', has_more: links.length > at + 1 + limit, data: links.slice(at + 1, at + 1 + limit) };
  const from = Math.max(0, at - limit);
  return { object: 'list', has_more: from > 0, data: links.slice(from, at) };
}
