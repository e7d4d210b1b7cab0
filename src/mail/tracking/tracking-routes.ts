// The ends of the links in sent messages (tracking-links.ts), public and without
// keys: the open pixel, the click redirect, and the one-click unsubscribe (RFC
// 8058: a POST with any body, no cookies, no auth, unsubscribes from that topic
// only; a GET shows a page with a button and changes nothing, since mail
// scanners fetch links). Each open and click is recorded as an event with its
// message id; an unsubscribe once per message and topic.
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { Logger } from '../../platform/logger.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { App } from '../../platform/http/server.ts';
import { recordEvents, type MailEventQueue, type NewMailEvent } from '../events/mail-events.ts';
import { escapeHtml } from '../templates/render.ts';
import { readLinkToken, type LinkKind, type LinkPayload } from './tracking-links.ts';

export interface TrackingDeps {
  pg: Pool;
  events: MailEventQueue;
  secret: string;
  log: Logger;
}

/** A transparent 1×1 GIF. */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><meta name="robots" content="noindex"><title>${title}</title></head><body style="font-family:sans-serif;max-width:32em;margin:3em auto">${body}</body></html>`;

const HTML = { 'text/html': { schema: Type.String() } };
const NOT_A_LINK = { description: 'Not a link of ours (unknown or altered token).', content: HTML };
const Params = Type.Object({ token: Type.String({ maxLength: 10_000, description: 'The signed token of the link.' }) });

export async function trackingRoutes(app: App, deps: TrackingDeps): Promise<void> {
  const { pg, events, secret } = deps;
  const tags = ['tracking'];

  // One-click unsubscribes come form-encoded, as multipart or empty: the body says nothing we need.
  app.addContentTypeParser('*', (_request, payload, done) => {
    payload.resume();
    payload.on('end', () => done(null, undefined));
    payload.on('error', done);
  });

  /** The token's payload and the message's organization, or a 404 page sent. */
  async function link(kind: LinkKind, token: string, reply: FastifyReply): Promise<(LinkPayload & { organizationId: string }) | undefined> {
    const payload = readLinkToken(secret, kind, token);
    const { rows } = payload ? await pg.query<{ organization_id: string }>('SELECT organization_id FROM mail_messages WHERE id = $1', [payload.m]) : { rows: [] };
    if (!payload || !rows[0]) {
      void reply.code(404).type('text/html; charset=utf-8').send(page('Link not found', '<p>This link is not valid.</p>'));
      return undefined;
    }
    return { ...payload, organizationId: rows[0].organization_id };
  }

  const record = async (event: NewMailEvent) => {
    await events.publish(await recordEvents(pg, [event]));
  };

  app.get('/m/o/:token', {
    schema: {
      tags, security: [], operationId: 'trackOpen', summary: 'Open pixel of a sent message',
      description: 'A 1×1 GIF; each fetch records an `opened` event of the message.',
      params: Params,
      response: { 200: { description: 'The pixel.', content: { 'image/gif': { schema: Type.String({ format: 'binary' }) } } }, 404: NOT_A_LINK },
    },
  }, async (request, reply) => {
    const found = await link('o', request.params.token, reply);
    if (!found) return reply;
    await record({ organization_id: found.organizationId, message_id: found.m, type: 'opened' });
    return reply.header('cache-control', 'no-store, max-age=0').type('image/gif').send(PIXEL as never);
  });

  app.get('/m/c/:token', {
    schema: {
      tags, security: [], operationId: 'trackClick', summary: 'Click on a link of a sent message',
      description: 'Records a `clicked` event with the destination, then redirects there exactly as the message had it (query and fragment included).',
      params: Params,
      response: { 302: { description: 'To the destination.', headers: { location: Type.String() } }, 404: NOT_A_LINK },
    },
  }, async (request, reply) => {
    const found = await link('c', request.params.token, reply);
    if (!found || !found.u) return reply;
    await record({ organization_id: found.organizationId, message_id: found.m, type: 'clicked', url: found.u });
    return reply.header('cache-control', 'no-store, max-age=0').header('referrer-policy', 'no-referrer').redirect(found.u, 302);
  });

  app.get('/m/u/:token', {
    schema: {
      tags, security: [], operationId: 'unsubscribePage', summary: 'Unsubscribe page',
      description: 'A page with a button that unsubscribes; fetching it changes nothing (mail scanners prefetch links).',
      params: Params,
      response: { 200: { description: 'The page.', content: HTML }, 404: NOT_A_LINK },
    },
  }, async (request, reply) => {
    const found = await link('u', request.params.token, reply);
    if (!found) return reply;
    return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page('Unsubscribe',
      `<p>Stop receiving these emails at <strong>${escapeHtml(found.r ?? '')}</strong>?</p><form method="post"><button type="submit">Unsubscribe</button></form>`));
  });

  app.post('/m/u/:token', {
    schema: {
      tags, security: [], operationId: 'unsubscribe', summary: 'One-click unsubscribe (RFC 8058)',
      description: 'Unsubscribes the recipient from the message\'s topic only (no other topic, no other status changes). Any body (`List-Unsubscribe=One-Click` form-encoded, multipart or empty), no cookies, no key. Repeating it changes nothing more.',
      params: Params,
      response: { 200: { description: 'Unsubscribed.', content: HTML }, 404: NOT_A_LINK },
    },
  }, async (request, reply) => {
    const found = await link('u', request.params.token, reply);
    if (!found || !found.r || !found.t) return reply;
    const { organizationId, r: email, t: topicId, m: messageId } = found;
    // The contact is made if the address was not one (a transactional message about a topic).
    await pg.query(
      `WITH c AS (
         INSERT INTO mail_contacts (organization_id, email) VALUES ($1, $2)
         ON CONFLICT (organization_id, email) DO UPDATE SET email = EXCLUDED.email RETURNING id)
       INSERT INTO mail_topic_subscriptions (topic_id, contact_id, subscribed)
       SELECT t.id, c.id, false FROM c, mail_topics t WHERE t.id = $3 AND t.organization_id = $1
       ON CONFLICT (topic_id, contact_id) DO UPDATE SET subscribed = false, updated_at = now()`,
      [organizationId, email, topicId],
    );
    await record({ organization_id: organizationId, message_id: messageId, type: 'unsubscribed', recipient: email, detail: topicId, once_key: `unsubscribed:${messageId}:${topicId}` });
    return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page('Unsubscribed', `<p>${escapeHtml(email)} will get no more of these emails.</p>`));
  });
}
