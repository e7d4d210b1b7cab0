// The links the sender puts into a message and the ingress answers under /m/:
// an open pixel (/m/o/…), each link of the HTML part rewritten to pass through
// /m/c/… (which redirects to the destination exactly as written), and the
// one-click unsubscribe URL (/m/u/…, RFC 8058). A link's token carries what it
// stands for and an HMAC of it under MAIL_LINK_SECRET, so nothing is looked up
// to trust it and nobody can make or alter one.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { decodeHTML } from 'entities';

export type LinkKind = 'o' | 'c' | 'u';

/** What a link stands for: the message, and a click's destination or an unsubscribe's recipient and topic. */
export interface LinkPayload {
  m: string;
  u?: string;
  r?: string;
  t?: string;
}

const sign = (secret: string, kind: LinkKind, body: string) => createHmac('sha256', secret).update(`${kind}.${body}`).digest().subarray(0, 16);

export function linkToken(secret: string, kind: LinkKind, payload: LinkPayload): string {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${body}.${sign(secret, kind, body).toString('base64url')}`;
}

/** The payload of a token of this kind, or undefined when it was not made with this secret. */
export function readLinkToken(secret: string, kind: LinkKind, token: string): LinkPayload | undefined {
  const [body, mac, extra] = token.split('.');
  if (!body || !mac || extra !== undefined || body.length > 8000) return undefined;
  const given = Buffer.from(mac, 'base64url');
  const expected = sign(secret, kind, body);
  // Only the one spelling of the MAC (base64url's last character has bits that decoding ignores).
  if (given.length !== expected.length || given.toString('base64url') !== mac || !timingSafeEqual(given, expected)) return undefined;
  try {
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as LinkPayload;
    return typeof payload?.m === 'string' ? payload : undefined;
  } catch {
    return undefined;
  }
}

export const linkUrl = (base: string, kind: LinkKind, token: string): string => `${base.replace(/\/+$/, '')}/m/${kind}/${token}`;

// An <a> start tag's href attribute, quoted (the destination as written, HTML-escaped).
const ANCHOR_HREF = /(<a\b[^>]*?\shref\s*=\s*)(["'])(.*?)\2/gis;

/**
 * The HTML part with each http(s) link of an <a> passing through a click link and an open pixel
 * at the end of the body. A destination is kept exactly as written (entities decoded: what the
 * browser would have followed), query and fragment included.
 */
export function trackHtml(html: string, secret: string, base: string, messageId: string): string {
  const tracked = html.replace(ANCHOR_HREF, (whole, start: string, quote: string, value: string) => {
    const destination = decodeHTML(value).trim();
    if (!/^https?:\/\//i.test(destination)) return whole;
    return `${start}${quote}${linkUrl(base, 'c', linkToken(secret, 'c', { m: messageId, u: destination }))}${quote}`;
  });
  const pixel = `<img src="${linkUrl(base, 'o', linkToken(secret, 'o', { m: messageId }))}" width="1" height="1" alt="" style="display:block;border:0;width:1px;height:1px">`;
  return /<\/body>/i.test(tracked) ? tracked.replace(/<\/body>/i, `${pixel}</body>`) : `${tracked}${pixel}`;
}
