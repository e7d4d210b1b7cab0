// Preview cards: a link with a title, description or image answers link-preview
// crawlers (the fetchers of chat apps and social networks that unfurl a pasted
// link) with a small page of Open Graph and Twitter tags instead of the
// redirect. That answer is not a scan. Everything from the link is HTML-escaped.
// A password-protected link's card never names its destination.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LinkState } from '../changelog/link-state.ts';

/** The User-Agents of link-preview fetchers (not search crawlers, which follow the redirect like anyone). */
const PREVIEW_FETCHER =
  /facebookexternalhit|facebot|twitterbot|slackbot|slack-imgproxy|linkedinbot|whatsapp|discordbot|telegrambot|skypeuripreview|teams\/|redditbot|pinterest|embedly|iframely|vkshare|mastodon|cardyb|bluesky|snapchat|viber|kakaotalk-scrap|line-poker|yeti\/|bitlybot|tumblr|quora link preview|outbrain|google-pagerenderer|applebot|bingpreview|zoombot|mattermost|rocket\.chat|nextcloud|signal/i;

const html = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export const hasPreviewCard = (link: LinkState): boolean => link.title != null || link.description != null || link.image != null;

export function isPreviewFetcher(request: FastifyRequest): boolean {
  return PREVIEW_FETCHER.test(request.headers['user-agent'] ?? '');
}

export function previewCardPage(link: LinkState, url: string): string {
  const title = link.title ?? link.shortId;
  const description = link.description ?? null;
  const image = link.image ?? null;
  const meta = (attribute: 'property' | 'name', key: string, value: string | null) => (value === null ? '' : `<meta ${attribute}="${key}" content="${html(value)}">\n`);
  const tags = [
    meta('property', 'og:type', 'website'),
    meta('property', 'og:url', url),
    meta('property', 'og:title', title),
    meta('property', 'og:description', description),
    meta('property', 'og:image', image),
    meta('name', 'twitter:card', image === null ? 'summary' : 'summary_large_image'),
    meta('name', 'twitter:title', title),
    meta('name', 'twitter:description', description),
    meta('name', 'twitter:image', image),
    meta('name', 'description', description),
  ].join('');
  const onward = link.passwordProtected === true ? '' : `<p><a href="${html(link.destination)}">Continue</a></p>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex">
<title>${html(title)}</title>
${tags}</head><body><h1>${html(title)}</h1>${description === null ? '' : `<p>${html(description)}</p>`}${onward}</body></html>`;
}

/** Sends the card (200; not a scan). Not kept by shared caches: browsers on the same URL get the redirect. */
export function sendPreviewCard(request: FastifyRequest, reply: FastifyReply, link: LinkState): void {
  const url = `${request.protocol}://${request.host}${request.url}`;
  reply
    .status(200)
    .header('cache-control', 'private, max-age=0')
    .header('vary', 'User-Agent')
    .header('x-content-type-options', 'nosniff')
    .type('text/html; charset=utf-8')
    .send(previewCardPage(link, url));
}
