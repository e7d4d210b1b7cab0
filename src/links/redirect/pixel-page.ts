// The page a link with retargeting pixels answers a browser with, instead of a
// 302: it schedules the redirect first (a script timer and a meta refresh), then
// fires each provider's documented page-view snippet, whose scripts load async.
// However slow or unreachable the providers are, the visitor leaves within
// REDIRECT_AFTER_MS (a second without JavaScript). Crawlers, non-browsers and
// links without pixels keep the plain 302 (wantsPixelPage).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { LinkState } from '../changelog/link-state.ts';
import { isBotUserAgent } from '../scans/visitor.ts';

/** How long the pixels get before the script sends the visitor on. */
export const REDIRECT_AFTER_MS = 500;
/** The meta refresh, for a browser without JavaScript (seconds). */
const REFRESH_AFTER_S = 1;

type Pixel = LinkState['pixels'][number];

/** Text for HTML content and quoted attributes. */
const html = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** A JavaScript string literal that cannot end its <script> element or break a line. */
const js = (s: string) => JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
/** A 1×1 image beacon, the providers' documented no-JavaScript fallback. */
const beacon = (url: string) => `<img height="1" width="1" style="display:none" alt="" src="${html(url)}">`;

interface Snippet {
  script: string;
  noscript?: string;
}

// Each provider's base code as its documentation gives it, with the ID passed as a string literal.
const SNIPPETS: Record<string, (id: string) => Snippet> = {
  meta: (id) => ({
    script: `!function(f,b,e,v,n,t,s){if(f.fbq)return;n=f.fbq=function(){n.callMethod?n.callMethod.apply(n,arguments):n.queue.push(arguments)};if(!f._fbq)f._fbq=n;n.push=n;n.loaded=!0;n.version='2.0';n.queue=[];t=b.createElement(e);t.async=!0;t.src=v;s=b.getElementsByTagName(e)[0];s.parentNode.insertBefore(t,s)}(window,document,'script','https://connect.facebook.net/en_US/fbevents.js');
fbq('init',${js(id)});fbq('track','PageView');`,
    noscript: beacon(`https://www.facebook.com/tr?id=${encodeURIComponent(id)}&ev=PageView&noscript=1`),
  }),
  google: (id) => ({
    script: `(function(d){var s=d.createElement('script');s.async=true;s.src='https://www.googletagmanager.com/gtag/js?id='+encodeURIComponent(${js(id)});d.head.appendChild(s)})(document);
window.dataLayer=window.dataLayer||[];window.gtag=window.gtag||function(){dataLayer.push(arguments)};gtag('js',new Date());gtag('config',${js(id)});`,
  }),
  tiktok: (id) => ({
    script: `!function(w,d,t){w.TiktokAnalyticsObject=t;var ttq=w[t]=w[t]||[];ttq.methods=["page","track","identify","instances","debug","on","off","once","ready","alias","group","enableCookie","disableCookie","holdConsent","revokeConsent","grantConsent"],ttq.setAndDefer=function(t,e){t[e]=function(){t.push([e].concat(Array.prototype.slice.call(arguments,0)))}};for(var i=0;i<ttq.methods.length;i++)ttq.setAndDefer(ttq,ttq.methods[i]);ttq.instance=function(t){for(var e=ttq._i[t]||[],n=0;n<ttq.methods.length;n++)ttq.setAndDefer(e,ttq.methods[n]);return e},ttq.load=function(e,n){var r="https://analytics.tiktok.com/i18n/pixel/events.js";ttq._i=ttq._i||{},ttq._i[e]=[],ttq._i[e]._u=r,ttq._t=ttq._t||{},ttq._t[e]=+new Date,ttq._o=ttq._o||{},ttq._o[e]=n||{};n=d.createElement("script");n.type="text/javascript",n.async=!0,n.src=r+"?sdkid="+encodeURIComponent(e)+"&lib="+t;e=d.getElementsByTagName("script")[0];e.parentNode.insertBefore(n,e)};
ttq.load(${js(id)});ttq.page()}(window,document,'ttq');`,
  }),
  linkedin: (id) => ({
    script: `window._linkedin_data_partner_ids=window._linkedin_data_partner_ids||[];window._linkedin_data_partner_ids.push(${js(id)});
(function(l){if(!l){window.lintrk=function(a,b){window.lintrk.q.push([a,b])};window.lintrk.q=[]}var s=document.getElementsByTagName("script")[0];var b=document.createElement("script");b.type="text/javascript";b.async=true;b.src="https://snap.licdn.com/li.lms-analytics/insight.min.js";s.parentNode.insertBefore(b,s)})(window.lintrk);`,
    noscript: beacon(`https://px.ads.linkedin.com/collect/?pid=${encodeURIComponent(id)}&fmt=gif`),
  }),
  x: (id) => ({
    script: `!function(e,t,n,s,u,a){e.twq||(s=e.twq=function(){s.exe?s.exe.apply(s,arguments):s.queue.push(arguments)},s.version='1.1',s.queue=[],u=t.createElement(n),u.async=!0,u.src='https://static.ads-twitter.com/uwt.js',a=t.getElementsByTagName(n)[0],a.parentNode.insertBefore(u,a))}(window,document,'script');
twq('config',${js(id)});`,
  }),
  pinterest: (id) => ({
    script: `!function(e){if(!window.pintrk){window.pintrk=function(){window.pintrk.queue.push(Array.prototype.slice.call(arguments))};var n=window.pintrk;n.queue=[],n.version="3.0";var t=document.createElement("script");t.async=!0,t.src=e;var r=document.getElementsByTagName("script")[0];r.parentNode.insertBefore(t,r)}}("https://s.pinimg.com/ct/core.js");
pintrk('load',${js(id)});pintrk('page');`,
    noscript: beacon(`https://ct.pinterest.com/v3/?event=init&tid=${encodeURIComponent(id)}&noscript=1`),
  }),
  snapchat: (id) => ({
    script: `(function(e,t,n){if(e.snaptr)return;var a=e.snaptr=function(){a.handleRequest?a.handleRequest.apply(a,arguments):a.queue.push(arguments)};a.queue=[];var s='script';var r=t.createElement(s);r.async=!0;r.src=n;var u=t.getElementsByTagName(s)[0];u.parentNode.insertBefore(r,u)})(window,document,'https://sc-static.net/scevent.min.js');
snaptr('init',${js(id)},{});snaptr('track','PAGE_VIEW');`,
  }),
  reddit: (id) => ({
    script: `!function(w,d){if(!w.rdt){var p=w.rdt=function(){p.sendEvent?p.sendEvent.apply(p,arguments):p.callQueue.push(arguments)};p.callQueue=[];var t=d.createElement("script");t.src="https://www.redditstatic.com/ads/pixel.js",t.async=!0;var s=d.getElementsByTagName("script")[0];s.parentNode.insertBefore(t,s)}}(window,document);
rdt('init',${js(id)});rdt('track','PageVisit');`,
  }),
};

/** A browser (it asks for HTML and is no crawler) following a link that has pixels. */
export function wantsPixelPage(link: LinkState, request: FastifyRequest): boolean {
  if (link.pixels.length === 0) return false;
  if (!(request.headers.accept ?? '').includes('text/html')) return false;
  return !isBotUserAgent(request.headers['user-agent']);
}

export function pixelPage(destination: string, pixels: readonly Pixel[]): string {
  const snippets = pixels.flatMap((p) => (SNIPPETS[p.provider] ? [SNIPPETS[p.provider]!(p.pixelId)] : []));
  // Each provider in its own <script>: one that throws does not stop the others.
  const scripts = snippets.map((s) => `<script>${s.script}</script>`).join('\n');
  const noscript = snippets.flatMap((s) => (s.noscript ? [s.noscript] : [])).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><meta name="referrer" content="no-referrer-when-downgrade">
<meta http-equiv="refresh" content="${REFRESH_AFTER_S};url=${html(destination)}">
<title>Redirecting…</title>
<script>setTimeout(function(){location.replace(${js(destination)})},${REDIRECT_AFTER_MS});</script>
${scripts}
</head><body><p>Redirecting… <a href="${html(destination)}">Continue</a></p>${noscript ? `<noscript>${noscript}</noscript>` : ''}</body></html>`;
}

/** Sends the page (200, never cached: every visit must reach the service and fire the pixels). */
export function sendPixelPage(reply: FastifyReply, destination: string, pixels: readonly Pixel[]): void {
  reply
    .status(200)
    .header('cache-control', 'private, no-store, max-age=0')
    .header('referrer-policy', 'no-referrer-when-downgrade')
    .header('x-content-type-options', 'nosniff')
    .type('text/html; charset=utf-8')
    .send(pixelPage(destination, pixels));
}

/** The page in the OpenAPI document (the redirect route's 200). */
export const PIXEL_PAGE_RESPONSE = {
  description:
    "A browser (it accepts text/html and is no crawler) following a link with `pixels` gets this small page instead of the 302: it fires each pixel's page view and sends the visitor to the URL the 302 would carry (with `svc_cid`), by script after 500 ms and by meta refresh after 1 s, however the providers' scripts fare. The scan is recorded as for the 302. Crawlers, clients that do not ask for HTML, HEAD and links without pixels get the 302.",
  headers: { 'cache-control': Type.String({ description: 'private, no-store, max-age=0' }) },
  content: { 'text/html': { schema: Type.String() } },
};
