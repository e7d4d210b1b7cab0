// How an open or a click is recorded, bounded whatever a client repeats:
//  - per IP: at most TRACKING_PER_MINUTE_PER_IP fetches a minute are recorded (per IPv4
//    address, per IPv6 /64, shared by every ingress through Redis); past it the fetch is still
//    answered (the pixel, the redirect: a person is never stranded) and nothing is written.
//  - per message: one open event per REPEAT_PERIOD_MS, and one click event per link per
//    REPEAT_PERIOD_MS (fixed periods of the clock), a person's and a machine's apart; a repeat
//    within the period is answered and writes nothing (no event, outbox row or Kafka message).
//    The report counts a message once as opened, once as clicked (migration 017); top links
//    count the recorded clicks, so a double click or a reload counts once.
//  - a machine's fetch (automated-fetch.ts) is kept flagged and not counted (migration 020).
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Pool } from '../../platform/postgres/pool.ts';
import { recordEvents, type MailEventOutbox } from '../events/mail-events.ts';
import { automatedReason } from './automated-fetch.ts';
import type { LinkPayload } from './tracking-links.ts';

/** Recorded opens and clicks per minute per client address (IPv4 address, IPv6 /64). */
export const TRACKING_PER_MINUTE_PER_IP = 300;
/** A repeat of an open, or of a click on one link, within this period of the clock writes nothing. */
export const REPEAT_PERIOD_MS = 10 * 60_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// The message's organization and when it was delivered (the first delivery event).
const MESSAGE = `
SELECT m.organization_id,
       (SELECT min(e.occurred_at) FROM mail_events e WHERE e.message_id = m.id AND e.type = 'delivered') AS delivered_at
  FROM mail_messages m WHERE m.id = $1`;

/** Records an open (no url) or a click of the message the token names, once per period; nothing when the message is unknown. */
export async function recordFetch(pg: Pool, events: MailEventOutbox, request: FastifyRequest, link: LinkPayload): Promise<void> {
  if (!UUID.test(link.m)) return;
  const { rows } = await pg.query<{ organization_id: string; delivered_at: Date | null }>(MESSAGE, [link.m]);
  const message = rows[0];
  if (!message) return;
  const type = link.u === undefined ? 'opened' : 'clicked';
  const reason = automatedReason({
    kind: type === 'opened' ? 'open' : 'click',
    method: request.method,
    userAgent: request.headers['user-agent'],
    sinceDeliveryMs: message.delivered_at ? Date.now() - message.delivered_at.getTime() : null,
  });
  const period = Math.floor(Date.now() / REPEAT_PERIOD_MS);
  // A URL may be long: the key names it by a hash (the key's index holds short values).
  const url = link.u === undefined ? '' : `:${createHash('sha256').update(link.u).digest('base64url').slice(0, 22)}`;
  const ids = await recordEvents(pg, [{
    organization_id: message.organization_id,
    message_id: link.m,
    type,
    url: link.u ?? null,
    detail: reason ? JSON.stringify({ automated: true, reason }) : null,
    automated: reason !== null,
    once_key: `${type}${reason ? '-automated' : ''}:${link.m}${url}:${period}`,
  }]);
  await events.publish(ids);
}
