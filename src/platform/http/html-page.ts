// Server-rendered HTML pages of the service, as the mail preferences page sends
// them (src/mail/tracking/tracking-routes.ts): every value escaped where it enters
// the markup, never cached, never framed, no Referer carrying a capability URL,
// and a Content-Security-Policy that allows no script but the page's own inline
// ones, named by their SHA-256 (so an injected script would not run even if
// escaping were missed somewhere).
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text or an attribute value as HTML. */
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (ch) => ENTITIES[ch]!);

/** The CSP source of an inline script's exact text. */
export const scriptHash = (source: string): string => `'sha256-${createHash('sha256').update(source, 'utf8').digest('base64')}'`;

export interface PageOptions {
  status?: number;
  /** The inline scripts the page may run (their exact text); none: no script at all. */
  scripts?: readonly string[];
  /** Whether the page's script may open connections to its own origin (EventSource). */
  connectSelf?: boolean;
  headers?: Record<string, string>;
}

export function contentSecurityPolicy(options: Pick<PageOptions, 'scripts' | 'connectSelf'>): string {
  const scripts = options.scripts?.length ? `; script-src ${options.scripts.map(scriptHash).join(' ')}` : '';
  const connect = options.connectSelf ? "; connect-src 'self'" : '';
  return `default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:${scripts}${connect}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;
}

/** Sends a page: its whole text, or a stream of it (a page whose start goes out before its end is known). */
export function sendHtmlPage(reply: FastifyReply, html: string | Readable, options: PageOptions = {}): FastifyReply {
  return reply.code(options.status ?? 200)
    .headers(options.headers ?? {})
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('x-robots-tag', 'noindex')
    .header('content-security-policy', contentSecurityPolicy(options))
    .type('text/html; charset=utf-8')
    .send(html);
}
