// MCP tools over links: list_links and create_link. They go through the same
// functions as GET and POST /api/v1/links, and create_link checks its link with
// the REST body schema too, so both entry points accept and refuse the same links.
import { z } from 'zod';
import { compileBodyValidator } from '../../platform/http/validation.ts';
import { createLink, listLinks, type LinkWriteDeps } from '../short-links/link-operations.ts';
import { CreateLinkBody, type CreateLinkInput, type LinkType } from '../short-links/link-schemas.ts';
import { SHORT_ID_PATTERN } from '../short-links/short-id.ts';
import { MAX_URL_LENGTH } from '../short-links/url-rules.ts';
import { CREATES, definedOnly, defineTool, READ_ONLY, throwIfInvalid } from './tool.ts';
import { Link, pageSummary, uuid } from './tool-schemas.ts';

const checkCreateLink = compileBodyValidator(CreateLinkBody);

const noControlCharacters = /^[^\u0000-\u001f]+$/;
const tag = z.string().min(1).max(50).regex(noControlCharacters, 'must not contain control characters');
const url = (description: string) =>
  z.string().min(1).max(MAX_URL_LENGTH).describe(`${description} Absolute http(s) URL without credentials or spaces, at most ${MAX_URL_LENGTH} characters.`);

/** One line per link, with what a follow-up call needs (the id). */
const linkLine = (l: LinkType): string =>
  `- ${l.shortId} (id ${l.id}): ${l.shortUrl} → ${l.destination}${l.isActive ? '' : ' [inactive]'}${l.tags.length ? ` tags: ${l.tags.join(', ')}` : ''}`;

export function linkTools(deps: LinkWriteDeps) {
  const listLinksTool = defineTool({
    name: 'list_links',
    title: 'List short links',
    description:
      "Lists the workspace's dynamic short links, newest first. Optional `search` (part of a short ID or destination URL, or an exact tag) and `tags` " +
      '(links carrying every one of them) filters. Pages hold `limit` links (default 20, at most 100); when `nextCursor` is not null, call again with ' +
      '`cursor` set to it and the same filters for the next page. Each link has its id (for get_analytics, get_referrers, get_funnel), short URL, destination, tags and state.',
    input: z.strictObject({
      search: z.string().min(1).max(200).regex(/^[^\u0000]*$/, 'must not contain NUL characters').optional().describe('Case-insensitive part of a short ID or destination URL, or an exact tag.'),
      tags: z.array(tag).max(10).optional().describe('Only links that carry every one of these tags (tags are lower-case).'),
      campaignId: uuid('Only links in this campaign (an id from list_campaigns).').optional(),
      activeOnly: z.boolean().default(false).describe('true: leave out deactivated links. Default false: every link, each with its isActive state.'),
      limit: z.number().int().min(1).max(100).default(20).describe('Links per page, 1 to 100; default 20.'),
      cursor: z.string().min(1).max(500).optional().describe('nextCursor of the previous page, unchanged.'),
    }),
    output: z.object({
      links: z.array(Link),
      nextCursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page.'),
    }),
    annotations: READ_ONLY,
    async run(args, ctx) {
      const page = await listLinks(deps.store, deps.baseUrl, ctx.workspaceId, {
        q: args.search,
        tag: args.tags,
        campaignId: args.campaignId,
        isActive: args.activeOnly ? true : undefined,
        limit: args.limit,
        cursor: args.cursor,
      });
      const summary = pageSummary(page, 'link', page.data.map(linkLine), 'list_links', 'No links match.');
      return { summary, result: { links: page.data, nextCursor: page.nextCursor } };
    },
  });

  const createLinkTool = defineTool({
    name: 'create_link',
    title: 'Create a short link',
    description:
      'Creates a dynamic short link that redirects to `destination` and records every scan. Optional: `shortId`, a custom back-half (the path after the ' +
      'domain; 3 to 64 letters, digits, "-" or "_", case-sensitive, must be free); routing rules `iosUrl` and `androidUrl` (where iPhone/iPad and ' +
      'Android visitors go instead); `tags`; `campaignId` (from list_campaigns or create_campaign); `expiresAt`; `scanLimit`. Returns the link with its ' +
      'short URL. Errors name the field: invalid_url, short_id_taken, short_id_reserved, campaign_not_found, expiry_in_past, validation_failed.',
    input: z.strictObject({
      destination: url('Where the link redirects.'),
      shortId: z.string().regex(new RegExp(SHORT_ID_PATTERN), 'must be 3 to 64 letters, digits, "-" or "_", starting with a letter or digit').optional()
        .describe('Custom back-half, e.g. "spring-menu" for <short domain>/spring-menu. Left out: a random 7-character ID is assigned.'),
      iosUrl: url('Routing rule: where iPhone, iPad and iPod visitors go instead of destination.').optional(),
      androidUrl: url('Routing rule: where Android visitors go instead of destination.').optional(),
      tags: z.array(tag).max(20).optional().describe('Up to 20 tags, each 1 to 50 characters; stored trimmed and lower-cased.'),
      campaignId: uuid('Put the link in this campaign.').optional(),
      expiresAt: z.string().optional().describe('ISO 8601 time, in the future, after which the link stops redirecting, e.g. "2027-01-01T00:00:00Z".'),
      scanLimit: z.number().int().min(1).max(1_000_000_000).optional().describe('Scans by people after which the link stops redirecting.'),
    }),
    output: z.object({ link: Link }),
    annotations: CREATES,
    async run(args, ctx) {
      const input: CreateLinkInput = definedOnly(args);
      throwIfInvalid(checkCreateLink(input));
      const link = await createLink(deps, ctx.workspaceId, input);
      return { summary: `Created ${link.shortUrl} → ${link.destination} (id ${link.id}).`, result: { link } };
    },
  });

  return [listLinksTool, createLinkTool];
}
