// One message handed over to the relay: read from Postgres, recipients on the
// organization's suppression list at this moment left out, DKIM-signed with its
// domain's key, with a Message-ID made from its id (so a message sent again
// after a crash is recognisably the same) and a return path of its own (VERP,
// return-path.ts, so its bounces name it), sent through nodemailer.
import nodemailer, { type Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import type Mail from 'nodemailer/lib/mailer/index.js';
import type { Pool } from '../../platform/postgres/pool.ts';
import { parseMailbox } from '../http/email-address.ts';
import type { MessageRow } from '../emails/messages.ts';
import { escapeHtml } from '../templates/render.ts';
import { linkToken, linkUrl, trackHtml } from '../tracking/tracking-links.ts';
import { returnPath } from './return-path.ts';

export interface Outgoing {
  /** What nodemailer sends; absent when no recipient is left. */
  mail: Mail.Options | null;
  /** Emails it counts as: its recipients left. */
  emails: number;
}

export const messageIdOf = (messageId: string, domain: string): string => `<${messageId}@${domain}>`;

/** What the links in a message, and its return path, are made with. */
export interface LinkSettings {
  secret: string;
  /** Where unsubscribe links point when the domain has no tracking host (PUBLIC_BASE_URL). */
  publicBaseUrl: string;
  /** The return path's domain (MAIL_BOUNCE_DOMAIN); empty: the From domain. */
  bounceDomain: string;
}

type Row = MessageRow & { dkim_selector: string | null; dkim_private_key: string | null; tracking_host: string | null; unsubscribe_topic: string | null };

/**
 * Reads a stored message and makes it ready to send, without recipients suppressed by now; with
 * click and open tracking when its domain has a tracking host, and a one-click unsubscribe when
 * it is about a topic (its topic_id, or a broadcast's kind `broadcast.<topic slug>`).
 */
export async function prepareHandover(pg: Pool, messageId: string, links: LinkSettings): Promise<Outgoing> {
  const { rows: [m] } = await pg.query<Row>(
    `SELECT m.*, d.dkim_selector, d.dkim_private_key, d.tracking_host,
            (SELECT t.id FROM mail_topics t WHERE t.organization_id = m.organization_id
                AND (t.id::text = m.topic_id OR t.slug = m.topic_id OR m.kind = 'broadcast.' || t.slug) LIMIT 1) AS unsubscribe_topic
       FROM mail_messages m
       LEFT JOIN mail_domains d ON d.organization_id = m.organization_id AND d.name = m.from_domain
      WHERE m.id = $1`,
    [messageId],
  );
  if (!m) throw new Error(`message ${messageId} is not stored`);
  const keyOf = (address: string) => parseMailbox(address)?.key ?? address.toLowerCase();
  const listed = [...m.to_addresses, ...m.cc_addresses, ...m.bcc_addresses].map(keyOf);
  const { rows: suppressed } = await pg.query<{ email: string }>('SELECT email FROM mail_suppressions WHERE organization_id = $1 AND email = ANY($2::text[])', [m.organization_id, listed]);
  const dropped = new Set([...m.suppressed, ...suppressed.map((s) => s.email)]);
  const keep = (list: string[]) => list.filter((address) => !dropped.has(keyOf(address)));
  const [to, cc, bcc] = [keep(m.to_addresses), keep(m.cc_addresses), keep(m.bcc_addresses)];
  const envelopeTo = [...new Set([...to, ...cc, ...bcc].map(keyOf))];
  if (envelopeTo.length === 0) return { mail: null, emails: 0 };
  const { rows: attachments } = m.attachments.length
    ? await pg.query<{ filename: string; content_type: string | null; content_id: string | null; content: Buffer }>('SELECT filename, content_type, content_id, content FROM mail_message_attachments WHERE message_id = $1 ORDER BY position', [m.id])
    : { rows: [] };
  let { html, text_body: text } = m;
  const headers = { ...m.headers };
  const base = m.tracking_host ? `https://${m.tracking_host}` : links.publicBaseUrl;
  if (m.tracking_host && html !== null) html = trackHtml(html, links.secret, base, m.id);
  if (m.unsubscribe_topic) {
    const url = linkUrl(base, 'u', linkToken(links.secret, 'u', { m: m.id, r: envelopeTo[0]!, t: m.unsubscribe_topic }));
    headers['List-Unsubscribe'] = `<${url}>`;
    headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';
    // The visible link too, after the tracking (it is not a click to count).
    if (html !== null) {
      const link = `<p style="font-size:12px;color:#666"><a href="${escapeHtml(url)}">Unsubscribe</a></p>`;
      html = /<\/body>/i.test(html) ? html.replace(/<\/body>/i, `${link}</body>`) : `${html}${link}`;
    }
    if (text !== null) text = `${text}\n\nUnsubscribe: ${url}\n`;
  }
  return {
    emails: envelopeTo.length,
    mail: {
      messageId: messageIdOf(m.id, m.from_domain),
      from: m.from_address,
      to, cc, bcc,
      replyTo: m.reply_to.length ? m.reply_to : undefined,
      subject: m.subject,
      ...(html !== null ? { html } : {}),
      ...(text !== null ? { text } : {}),
      headers,
      attachments: attachments.map((a) => ({ filename: a.filename, content: a.content, ...(a.content_type ? { contentType: a.content_type } : {}), ...(a.content_id ? { cid: a.content_id } : {}) })),
      envelope: { from: returnPath(links.secret, m.id, links.bounceDomain || m.from_domain), to: envelopeTo },
      ...(m.dkim_private_key ? { dkim: { domainName: m.from_domain, keySelector: m.dkim_selector!, privateKey: m.dkim_private_key } } : {}),
    },
  };
}

export type Relay = Transporter<SMTPPool.SentMessageInfo>;

/** A pooled SMTP transport to the relay, at most `connections` at once. */
export function createRelay(smtpUrl: string, connections: number): Relay {
  return nodemailer.createTransport({
    url: smtpUrl,
    pool: true,
    maxConnections: connections,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  } as SMTPPool.Options);
}

/** A refusal the relay means for good (SMTP 5xx); anything else (4xx, connection refused, a timeout) is worth another try. */
export const isPermanent = (err: unknown): boolean => {
  const code = (err as { responseCode?: number }).responseCode;
  return typeof code === 'number' && code >= 500 && code < 600;
};

export const describeFailure = (err: unknown): string => {
  const e = err as { response?: string; code?: string; message?: string };
  return (e.response ?? `${e.code ?? 'error'}: ${e.message ?? String(err)}`).slice(0, 500);
};
