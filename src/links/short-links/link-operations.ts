// Creating and listing links as every entry point does it (REST and MCP), so
// both apply the same rules, publish to links.changelog the same way and answer
// with the same link objects.
import type { LinkChangelog } from '../changelog/link-changelog.ts';
import type { CreateLinkInput, LinkType, ListLinksQueryType } from './link-schemas.ts';
import { orRefused } from './link-refusals.ts';
import { toLink, type LinkRow, type LinkStore } from './link-store.ts';

export interface LinkWriteDeps {
  store: LinkStore;
  changelog: LinkChangelog;
  /** Base of the short URLs. */
  baseUrl: string;
}

/** Creates the link (input already schema-checked), publishes it to the changelog and returns it. */
export async function createLink(deps: LinkWriteDeps, workspaceId: string, input: CreateLinkInput): Promise<LinkType> {
  const { row } = orRefused(await deps.store.tryCreate(workspaceId, input));
  await deps.changelog.publishSoon([row.id]);
  return toLink(row, deps.baseUrl);
}

/**
 * After links' new scan limits are committed and published: the scans the sink stored meanwhile were
 * held to the old limits, so the links that reached their new one through them are closed and
 * published now. Returns them as they are now, by id.
 */
export async function closeReachedLimits(deps: LinkWriteDeps, workspaceId: string, ids: readonly string[]): Promise<Map<string, LinkRow>> {
  const closed = await deps.store.closeIfReached(workspaceId, ids);
  if (closed.length > 0) await deps.changelog.publishSoon(closed.map((r) => r.id));
  return new Map(closed.map((r) => [r.id, r]));
}

/** A page of the workspace's links. */
export async function listLinks(store: LinkStore, baseUrl: string, workspaceId: string, query: ListLinksQueryType) {
  const { rows, nextCursor } = await store.list(workspaceId, query);
  return { object: 'list' as const, data: rows.map((r) => toLink(r, baseUrl)), nextCursor };
}
