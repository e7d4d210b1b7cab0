// One message handed over to the relay: read from Postgres, recipients suppressed or
// unsubscribed by this moment left out (recipient-choices.ts), DKIM-signed with its
// domain's key (stored sealed, opened here), with a Message-ID made from its id (so a
// message sent again after a crash is recognisably the same) and a return path of its
// own (VERP, return-path.ts, so its bounces name it), sent through nodemailer.
import nodemailer, { type Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import type Mail from 'nodemailer/lib/mailer/index.js';
import type { Pool } from '../../platform/postgres/pool.ts';
import { sealedAt } from '../../platform/secrets/sealed-columns.ts';
import type { SealedSecrets } from '../../platform/secrets/sealed-secrets.ts';
import { parseMailbox } from '../http/email-address.ts';
import type { MessageRow } from '../emails/messages.ts';
import { escapeHtml, fillUnsubscribeUrl, hasUnsubscribePlaceholder } from '../templates/render.ts';
import { linkToken, linkUrl, trackHtml } from '../tracking/tracking-links.ts';
import { DKIM_PRIVATE_KEY } from '../sealed-columns.ts';
import { leftOut } from './recipient-choices.ts';
import { returnPath } from './return-path.ts';

/** One SMTP transaction: a message about a topic goes as one per recipient, anything else as one. */
export interface Copy {
  /** Its envelope recipients (lower-cased). */
  recipients: string[];
  mail: Mail.Options;
}

export interface Outgoing {
  /** What nodemailer sends; none when no recipient is left. */
  copies: Copy[];
  /** Emails it counts as: its recipients left. */
  emails: number;
  /** Recipients left out at this hand-over, and why (recipient-choices.ts). */
  leftOut: Map<string, string>;
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

type Row = MessageRow & {
  domain_id: string | null; dkim_selector: string | null; dkim_private_key: string | null; tracking_host: string | null;
  unsubscribe_topic: string | null; topic_slug: string | null;
};

/**
 * Reads a stored message and makes it ready to send, without the recipients left out by now
 * (suppressed, or unsubscribed: recipient-choices.ts); with click and open tracking when its
 * domain has a tracking host, and a one-click unsubscribe when it is about a topic (its
 * topic_id, or a broadcast's kind `broadcast.<topic slug>`) or is a broadcast without a topic
 * (kind `broadcast`: the link unsubscribes the contact from all the organization's broadcasts,
 * as Resend's does; tracking-routes.ts). A message with a one-click unsubscribe goes as
 * one copy per recipient, as ESPs send (Resend, listmonk), so that each copy's unsubscribe
 * link names its own recipient; every copy shows the same To and Cc and carries the same
 * Message-ID. Copies of recipients in `handedTo` (the relay took them already) are left out.
 * A message whose html or text holds the unsubscribe placeholder ({{{RESEND_UNSUBSCRIBE_URL}}},
 * {{unsubscribe_url}}) goes as one copy per recipient too, each placeholder filled with the
 * recipient's own link (the one-click token; without a topic it names none, and opens the
 * preferences page of all topics: tracking/preferences-page.ts).
 */
export async function prepareHandover(pg: Pool, secrets: SealedSecrets, messageId: string, links: LinkSettings, handedTo: readonly string[] = []): Promise<Outgoing> {
  const { rows: [m] } = await pg.query<Row>(
    `SELECT m.*, d.id AS domain_id, d.dkim_selector, d.dkim_private_key, d.tracking_host, t.id AS unsubscribe_topic, t.slug AS topic_slug
       FROM mail_messages m
       LEFT JOIN mail_domains d ON d.organization_id = m.organization_id AND d.name = m.from_domain
       LEFT JOIN LATERAL (SELECT t.id, t.slug FROM mail_topics t WHERE t.organization_id = m.organization_id
                AND (t.id::text = m.topic_id OR t.slug = m.topic_id OR m.kind = 'broadcast.' || t.slug) LIMIT 1) t ON true
      WHERE m.id = $1`,
    [messageId],
  );
  if (!m) throw new Error(`message ${messageId} is not stored`);
  const keyOf = (address: string) => parseMailbox(address)?.key ?? address.toLowerCase();
  const listed = [...new Set([...m.to_addresses, ...m.cc_addresses, ...m.bcc_addresses].map(keyOf))].filter((r) => !m.suppressed.includes(r));
  const leftOutNow = await leftOut(pg, {
    organizationId: m.organization_id, recipients: listed, topicId: m.unsubscribe_topic, topicSlug: m.topic_slug, broadcast: m.kind === 'broadcast' || m.kind.startsWith('broadcast.'),
  });
  const dropped = new Set([...m.suppressed, ...leftOutNow.keys()]);
  const keep = (list: string[]) => list.filter((address) => !dropped.has(keyOf(address)));
  const [to, cc, bcc] = [keep(m.to_addresses), keep(m.cc_addresses), keep(m.bcc_addresses)];
  const envelopeTo = [...new Set([...to, ...cc, ...bcc].map(keyOf))];
  if (envelopeTo.length === 0) return { copies: [], emails: 0, leftOut: leftOutNow };
  const { rows: attachments } = m.attachments.length
    ? await pg.query<{ filename: string; content_type: string | null; content_id: string | null; content: Buffer }>('SELECT filename, content_type, content_id, content FROM mail_message_attachments WHERE message_id = $1 ORDER BY position', [m.id])
    : { rows: [] };
  const dkimKey = m.domain_id === null ? null : secrets.openNullable(m.dkim_private_key, sealedAt(DKIM_PRIVATE_KEY, m.domain_id));
  const base = m.tracking_host ? `https://${m.tracking_host}` : links.publicBaseUrl;
  const tracked = m.tracking_host && m.html !== null ? trackHtml(m.html, links.secret, base, m.id) : m.html;
  const [htmlAsks, textAsks] = [hasUnsubscribePlaceholder(m.html), hasUnsubscribePlaceholder(m.text_body)];
  // A broadcast about no topic (Resend's at the root) unsubscribes from every broadcast.
  const oneClick = m.unsubscribe_topic !== null || m.kind === 'broadcast';
  const mail = (recipients: string[], unsubscribeFor: string | null): Mail.Options => {
    let [html, text] = [tracked, m.text_body];
    const headers = { ...m.headers };
    if (unsubscribeFor) {
      const url = linkUrl(base, 'u', linkToken(links.secret, 'u', { m: m.id, r: unsubscribeFor, ...(m.unsubscribe_topic ? { t: m.unsubscribe_topic } : {}) }));
      // Filled after the tracking, so the link is not a click to count.
      if (html !== null && htmlAsks) html = fillUnsubscribeUrl(html, 'html', url);
      if (text !== null && textAsks) text = fillUnsubscribeUrl(text, 'text', url);
      if (oneClick) {
        headers['List-Unsubscribe'] = `<${url}>`;
        headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';
        // The visible link too, unless the part placed it itself.
        if (html !== null && !htmlAsks) {
          const link = `<p style="font-size:12px;color:#666"><a href="${escapeHtml(url)}">Unsubscribe</a></p>`;
          html = /<\/body>/i.test(html) ? html.replace(/<\/body>/i, `${link}</body>`) : `${html}${link}`;
        }
        if (text !== null && !textAsks) text = `${text}\n\nUnsubscribe: ${url}\n`;
      }
    }
    return {
      messageId: messageIdOf(m.id, m.from_domain),
      from: m.from_address,
      to, cc, bcc,
      replyTo: m.reply_to.length ? m.reply_to : undefined,
      subject: m.subject,
      ...(html !== null ? { html } : {}),
      ...(text !== null ? { text } : {}),
      headers,
      attachments: attachments.map((a) => ({ filename: a.filename, content: a.content, ...(a.content_type ? { contentType: a.content_type } : {}), ...(a.content_id ? { cid: a.content_id } : {}) })),
      envelope: { from: returnPath(links.secret, m.id, links.bounceDomain || m.from_domain), to: recipients },
      ...(dkimKey ? { dkim: { domainName: m.from_domain, keySelector: m.dkim_selector!, privateKey: dkimKey } } : {}),
    };
  };
  const copies = oneClick || htmlAsks || textAsks
    ? envelopeTo.filter((r) => !handedTo.includes(r)).map((r) => ({ recipients: [r], mail: mail([r], r) }))
    : [{ recipients: envelopeTo, mail: mail(envelopeTo, null) }];
  return { copies, emails: envelopeTo.length, leftOut: leftOutNow };
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

/**
 * The recipients the relay refused for good at RCPT TO (5xx), with its reply: from nodemailer's
 * answer when others were taken, or its error when none was. A refusal of the whole message
 * (at MAIL FROM or DATA: its content, its size) names no recipient.
 */
export function hardRefusedRecipients(infoOrError: unknown): { recipient: string; response: string }[] {
  const rejected = (infoOrError as { rejectedErrors?: { recipient?: string; responseCode?: number; response?: string }[] } | undefined)?.rejectedErrors ?? [];
  return rejected
    .filter((e) => typeof e.recipient === 'string' && typeof e.responseCode === 'number' && e.responseCode >= 500 && e.responseCode < 600)
    .map((e) => ({ recipient: e.recipient!.toLowerCase(), response: String(e.response ?? e.responseCode).slice(0, 500) }));
}
