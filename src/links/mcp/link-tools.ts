// MCP tools over links: list_links and create_link. They go through the same
// functions as GET and POST /api/v1/links, and their arguments are the REST
// query and body schemas (renamed where a model reads them better), so both
// entry points accept and refuse the same links.
import { Type } from '@sinclair/typebox';
import { CREATES, defineTool, READ_ONLY, withDefault } from '../../platform/mcp/tool.ts';
import { createLink, listLinks, type LinkWriteDeps } from '../short-links/link-operations.ts';
import { CreateLinkBody, Link, ListLinksQuery, type LinkType } from '../short-links/link-schemas.ts';
import { describedFor, domainArg, lowerCaseId, pageSummary } from './tool-schemas.ts';

/** One line per link, with what a follow-up call needs (the id). */
const linkLine = (l: LinkType): string =>
  `- ${l.shortId} (id ${l.id}): ${l.shortUrl} → ${l.destination}${l.isActive ? '' : ' [inactive]'}${l.tags.length ? ` tags: ${l.tags.join(', ')}` : ''}`;

const query = ListLinksQuery.properties;

/** The REST create-link body without what the tool does not offer (pixels, creating a link deactivated). */
export const CreateLinkArgs = Type.Omit(CreateLinkBody, ['pixels', 'isActive']);

export const ListLinksArgs = Type.Object(
  {
    search: describedFor(query.q, 'Case-insensitive part of a short ID or destination URL, or an exact tag.'),
    tags: describedFor(query.tag, 'Only links that carry every one of these tags (tags are lower-case).'),
    campaignId: lowerCaseId(query.campaignId, 'Only links in this campaign (an id from list_campaigns).'),
    domain: domainArg,
    activeOnly: withDefault(Type.Optional(Type.Boolean({ default: false, description: 'true: leave out deactivated links. Default false: every link, each with its isActive state.' }))),
    limit: withDefault(describedFor(query.limit, 'Links per page, 1 to 100; default 20.')),
    cursor: describedFor(query.cursor, 'nextCursor of the previous page, unchanged.'),
  },
  { additionalProperties: false },
);

export function linkTools(deps: LinkWriteDeps) {
  const listLinksTool = defineTool({
    name: 'list_links',
    title: 'List short links',
    description:
      "Lists the workspace's dynamic short links, newest first. Optional `search` (part of a short ID or destination URL, or an exact tag) and `tags` " +
      '(links carrying every one of them) filters. Pages hold `limit` links (default 20, at most 100); when `nextCursor` is not null, call again with ' +
      '`cursor` set to it and the same filters for the next page. Each link has its id (for get_analytics, get_referrers, get_funnel), short URL, destination, tags and state.',
    input: ListLinksArgs,
    output: Type.Object({
      links: Type.Array(Link),
      nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for the next page; null on the last page.' }),
    }),
    annotations: READ_ONLY,
    async run(args, ctx) {
      const page = await listLinks(deps.store, deps.baseUrl, ctx.tenantId, {
        q: args.search,
        tag: args.tags,
        campaignId: args.campaignId,
        domain: args.domain,
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
      'Android visitors go instead); `geo` ({"DE": url, …}: where visitors from a country go; device URLs win over it); `testVariants` (an A/B test: 2 to 4 ' +
      '{url, percent}, each at least 10, summing to 100; each visitor sticks to one; geo and device URLs win over it); `tags`; `campaignId` (from list_campaigns ' +
      'or create_campaign); `expiresAt`; `scanLimit`; a preview card for chat apps and social networks (`title`, `description`, `image`); `password` (visitors must enter it first; never ' +
      'shown again, the link says `passwordProtected`); `validFrom` (the link redirects from then on); `expiredUrl` (where visitors go instead of an error page ' +
      'once the link is expired, out of scans, deactivated or not valid yet); `forwardQuery` (default true: the short URL\'s query string is passed on to the ' +
      'destination); `clickId` (default true; false leaves out the svc_cid parameter, for pre-signed URLs). Returns the link with its short URL. Errors name ' +
      'the field: invalid_url, short_id_taken, short_id_reserved, campaign_not_found, expiry_in_past, valid_from_after_expiry, invalid_country, ' +
      'invalid_test_variants, validation_failed.',
    input: CreateLinkArgs,
    output: Type.Object({ link: Link }),
    annotations: CREATES,
    async run(args, ctx) {
      const link = await createLink(deps, ctx.tenantId, args);
      return { summary: `Created ${link.shortUrl} → ${link.destination} (id ${link.id}).`, result: { link } };
    },
  });

  return [listLinksTool, createLinkTool];
}
