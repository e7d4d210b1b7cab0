// Zod pieces the MCP tools share: ids, the trailing analytics window, and the
// link and campaign records (the same objects the REST API answers with).
import { z } from 'zod';
import { MAX_RANGE_DAYS } from '../analytics/time-range.ts';

/** UUID_PATTERN without its case-insensitive flag, which a JSON Schema pattern cannot carry. */
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** A UUID in its plain form, lower-cased (ClickHouse compares ids as text). */
export const uuid = (description: string) => z.string().regex(UUID, 'must be a UUID').transform((id) => id.toLowerCase()).describe(description);

export const daysBack = z
  .number()
  .int()
  .min(1)
  .max(MAX_RANGE_DAYS)
  .default(30)
  .describe(`Trailing window in days, ending at the end of the current hour (UTC). 1 to ${MAX_RANGE_DAYS}; default 30.`);

/** Narrows an analytics tool to one link or one campaign. */
export const scopeArgs = {
  linkId: uuid('Only this link (an id from list_links).').optional(),
  campaignId: uuid('Only this campaign (an id from list_campaigns).').optional(),
};

export const includeBots = z.boolean().default(false).describe('Count scans by known bots and link previewers too (default false).');

/** The window an analytics answer covers. */
export const Window = z.object({
  from: z.string().describe('Start, inclusive (ISO 8601, UTC, on the hour).'),
  to: z.string().describe('End, exclusive (ISO 8601, UTC, on the hour).'),
  daysBack: z.number().int(),
  interval: z.enum(['hour', 'day', 'week', 'month']).describe('Bucket of the series: hour up to 2 days, day up to 92 days, else week.'),
});

export const Link = z.object({
  id: z.string(),
  shortId: z.string(),
  shortUrl: z.string().describe('The short URL to share or print as a QR code.'),
  destination: z.string(),
  iosUrl: z.string().nullable(),
  androidUrl: z.string().nullable(),
  tags: z.array(z.string()),
  pixels: z.array(z.object({ provider: z.string(), pixelId: z.string() })),
  expiresAt: z.string().nullable(),
  scanLimit: z.number().int().nullable(),
  exhaustedAt: z.string().nullable().describe('When the link used up its scan limit.'),
  isActive: z.boolean().describe('False once deactivated (soft-deleted).'),
  campaignId: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const Campaign = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  linkCount: z.number().int().describe('Links in the campaign, active or not.'),
  activeLinkCount: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const Revenue = z.object({ currency: z.string(), amount: z.number().describe('In major units (12.5 = twelve and a half).'), conversions: z.number().int() });

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
