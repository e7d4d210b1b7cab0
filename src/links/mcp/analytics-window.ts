// The trailing window (`daysBack`) and the link or campaign scope of the MCP
// analytics tools, resolved and checked as the REST analytics routes do.
import { notFound } from '../../platform/http/errors.ts';
import type { ToolContext } from '../../platform/mcp/tool.ts';
import { resolveRange, type TimeRange } from '../analytics/time-range.ts';
import type { CampaignStore } from '../campaigns/campaign-store.ts';
import type { LinkStore } from '../short-links/link-store.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The last `days` days up to the end of the current hour, in whole UTC hours, with REST's default interval for that span. */
export function trailingRange(days: number, now = Date.now()): TimeRange {
  const to = Math.ceil(now / HOUR) * HOUR;
  return resolveRange({ from: new Date(to - days * DAY).toISOString(), to: new Date(to).toISOString() });
}

/** The window as the tools report it. */
export const windowOf = (range: TimeRange, days: number) => ({ from: range.from.toISOString(), to: range.to.toISOString(), daysBack: days, interval: range.interval });

/** Refuses link and campaign ids that are not this workspace's (404 not_found, as REST answers them). */
export async function checkScope(stores: { links: LinkStore; campaigns: CampaignStore }, ctx: ToolContext, scope: { linkId?: string; campaignId?: string }): Promise<void> {
  if (scope.linkId && !(await stores.links.get(ctx.tenantId, scope.linkId))) throw notFound('link');
  if (scope.campaignId && !(await stores.campaigns.get(ctx.tenantId, scope.campaignId))) throw notFound('campaign');
}
