// TypeBox pieces the MCP tools share, taken from the REST schemas where REST
// has the same rule (ids, includeBots), plus the MCP-only trailing analytics
// window (`daysBack`), and the text helpers of the tool summaries.
import { Type, type TString } from '@sinclair/typebox';
import { StringEnum } from '../../platform/http/schema-types.ts';
import { describedFor, withDefault } from '../../platform/mcp/tool.ts';
import { INTERVALS, WorkspaceAnalyticsQuery } from '../analytics/analytics-schemas.ts';
import { MAX_RANGE_DAYS } from '../analytics/time-range.ts';
import { DomainFilterParam } from '../short-links/link-domain.ts';

export { describedFor } from '../../platform/mcp/tool.ts';

/** An optional id argument with the REST rule of `schema` (a UUID), lower-cased before the tool runs (ClickHouse compares ids as text). */
export const lowerCaseId = (schema: TString, description: string) =>
  Type.Optional(Type.Transform(describedFor(schema, description)).Decode((id) => id.toLowerCase()).Encode((id) => id));

export const daysBack = withDefault(Type.Optional(Type.Integer({
  minimum: 1,
  maximum: MAX_RANGE_DAYS,
  default: 30,
  description: `Trailing window in days, ending at the end of the current hour (UTC). 1 to ${MAX_RANGE_DAYS}; default 30.`,
})));

/** Narrows a tool to the links on one domain (the REST `domain` filter). */
export const domainArg = Type.Optional(describedFor(DomainFilterParam, 'Only links on this domain: a branded domain name such as go.acme.com (the `domain` of a link), or the base domain\'s host.'));

/** Narrows an analytics tool to one link or one campaign (the ids of the REST analytics query). */
export const scopeArgs = {
  linkId: lowerCaseId(WorkspaceAnalyticsQuery.properties.linkId, 'Only this link (an id from list_links).'),
  campaignId: lowerCaseId(WorkspaceAnalyticsQuery.properties.campaignId, 'Only this campaign (an id from list_campaigns).'),
};

export const includeBots = withDefault(describedFor(WorkspaceAnalyticsQuery.properties.includeBots, 'Count scans by crawlers and link-preview fetchers too (default false). Generic HTTP clients such as curl always count.'));

/** An MCP-only `top` (how many entries a list holds): 1 to `max`, `fallback` when left out. */
export const top = (max: number, fallback: number, description: string) =>
  withDefault(Type.Optional(Type.Integer({ minimum: 1, maximum: max, default: fallback, description })));

/** The window an analytics answer covers. */
export const Window = Type.Object({
  from: Type.String({ format: 'date-time', description: 'Start, inclusive (ISO 8601, UTC, on the hour).' }),
  to: Type.String({ format: 'date-time', description: 'End, exclusive (ISO 8601, UTC, on the hour).' }),
  daysBack: Type.Integer(),
  interval: StringEnum(INTERVALS, { description: 'Bucket of the series: hour up to 2 days, day up to 92 days, else week.' }),
});

/** "1,234" */
export const count = (n: number): string => n.toLocaleString('en-US');

/** "12.5%" of part in whole (0% of nothing). */
export const percent = (part: number, whole: number): string => `${whole === 0 ? 0 : Math.round((part / whole) * 1000) / 10}%`;

/** The text summary of a page of a list: a count, a line per item, and how to get the next page. */
export function pageSummary(page: { data: unknown[]; nextCursor: string | null }, noun: string, lines: string[], tool: string, none: string): string {
  if (page.data.length === 0) return none;
  const more = page.nextCursor ? [`More: call ${tool} again with cursor "${page.nextCursor}".`] : [];
  return [`${page.data.length} ${noun}${page.data.length === 1 ? '' : 's'}, newest first:`, ...lines, ...more].join('\n');
}
