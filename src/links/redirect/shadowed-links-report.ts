// At start, the short links whose ID is now a reserved path (a route the service
// took after they were made, as Resend's root resources took /topics, /segments…):
// logged once as a warning naming them, so an operator can tell their owners. They
// still work where the path is shared (platform/http/root-short-links.ts): on a
// branded domain, and on the base domain for a visitor without an API key; an API
// client with a key gets the route. docs/operations.md, "Short links under reserved paths".
import type { Logger } from '../../platform/logger.ts';
import type { Pool } from '../../platform/postgres/pool.ts';

/** At most this many are named in the warning (the count is always whole). */
const NAMED = 100;

export interface ShadowedLink {
  short_id: string;
  domain: string | null;
  workspace_id: string;
}

/** The links whose short ID (without case) is one of `reserved`, oldest first. */
export async function shadowedLinks(pg: Pool, reserved: readonly string[]): Promise<ShadowedLink[]> {
  const { rows } = await pg.query<ShadowedLink>(
    'SELECT short_id, domain, workspace_id FROM links WHERE lower(short_id) = ANY($1::text[]) ORDER BY created_at, id',
    [reserved],
  );
  return rows;
}

/** Logs the shadowed links once (nothing when there are none); a failure to read them is logged, never thrown. */
export async function reportShadowedLinks(pg: Pool, reserved: readonly string[], log: Logger): Promise<void> {
  try {
    const links = await shadowedLinks(pg, reserved);
    if (links.length === 0) return;
    log.warn(
      { count: links.length, links: links.slice(0, NAMED).map((l) => `${l.domain ?? '(base domain)'}/${l.short_id} (workspace ${l.workspace_id})`) },
      'short links whose ID is now a reserved path: served on branded domains and to visitors without an API key; API clients get the route',
    );
  } catch (err) {
    log.warn({ err }, 'short links under reserved paths not checked');
  }
}
