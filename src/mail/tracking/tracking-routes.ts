// The ends of the links in sent messages (tracking-links.ts), public and without
// keys: the open pixel, the click redirect, and the one-click unsubscribe (RFC
// 8058: a POST with any body, no cookies, no auth, unsubscribes from that topic
// only, or, for a broadcast about no topic, from all the organization's broadcasts
// (broadcast-opt-out.ts); a GET shows the preferences page, with a button for the topic, and
// changes nothing, since mail scanners fetch links; the page's form posts to
// <token>/preferences: preferences-page.ts). Opens and clicks are recorded as events with their
// message id, bounded per IP and per message and flagged when a machine made
// them (tracking-record.ts); an unsubscribe once per message and topic. A link
// is ours when its signature holds: the pixel and the redirect never wait on a
// store's verdict, so a person is never stranded.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../../platform/logger.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { Redis } from '../../platform/redis.ts';
import type { App } from '../../platform/http/server.ts';
import { clientLimitKey } from '../../platform/http/client-ip.ts';
import { failOpen } from '../../platform/limits/fail-open.ts';
import { SlidingWindowLimiter } from '../../platform/limits/sliding-window.ts';
import { recordEvents, type MailEventOutbox, type NewMailEvent } from '../events/mail-events.ts';
import { escapeHtml } from '../templates/render.ts';
import { preferencesHtml, saveChoices, topicChoices } from './preferences-page.ts';
import { readLinkToken, type LinkKind, type LinkPayload } from './tracking-links.ts';
import { recordFetch, REPEAT_PERIOD_MS, TRACKING_PER_MINUTE_PER_IP } from './tracking-record.ts';
import { contactOfAddressCte } from '../audience/contacts.ts';
import { getsBroadcasts, unsubscribeFromBroadcasts } from './broadcast-opt-out.ts';

export interface TrackingDeps {
  pg: Pool;
  redis: Redis;
  events: MailEventOutbox;
  secret: string;
  log: Logger;
}

/** A transparent 1×1 GIF. */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><meta name="robots" content="noindex"><title>${title}</title></head><body style="font-family:sans-serif;max-width:32em;margin:3em auto">${body}</body></html>`;

const LINK_NOT_FOUND = page('Link not found', '<p>This link is not valid.</p>');

/** An HTML page of ours: never cached, never framed (no clickjacking of its buttons), no script, forms only to itself, no token in a Referer. */
const sendPage = (reply: FastifyReply, html: string, status = 200) =>
  reply.code(status)
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
    .type('text/html; charset=utf-8')
    .send(html);

/** The preferences form's fields (application/x-www-form-urlencoded). */
const FORM_BODY_LIMIT = 64 * 1024;
const PreferencesForm = Type.Object({
  shown: Type.Optional(Type.Array(Type.String(), { description: 'The topic ids the page showed: only these change.' })),
  topic: Type.Optional(Type.Array(Type.String(), { description: 'The topic ids ticked: subscribed; the other shown ones are unsubscribed.' })),
});

const HTML = { 'text/html': { schema: Type.String() } };
const NOT_A_LINK = { description: 'Not a link of ours (unknown or altered token).', content: HTML };
const BOUNDS = `Recorded at most ${TRACKING_PER_MINUTE_PER_IP} times a minute per client IP (an IPv6 client per /64), and once per ${REPEAT_PERIOD_MS / 60_000} minutes per message (a click: per message and link); past either, it is still answered and records nothing. Fetches by machines (HEAD, no User-Agent, privacy proxies that fetch on arrival, crawlers and scanners, a click within seconds of delivery) are recorded flagged \`automated\` and not counted in reports.`;
const Params = Type.Object({ token: Type.String({ maxLength: 10_000, description: 'The signed token of the link.' }) });

export async function trackingRoutes(app: App, deps: TrackingDeps): Promise<void> {
  const { pg, events, secret, log } = deps;
  const tags = ['tracking'];
  const perIp = new SlidingWindowLimiter(deps.redis, 'mail-tracking-ip', TRACKING_PER_MINUTE_PER_IP, 60_000);

  // One-click unsubscribes come form-encoded, as multipart or empty: the body says nothing we need.
  app.addContentTypeParser('*', (_request, payload, done) => {
    payload.resume();
    payload.on('end', () => done(null, undefined));
    payload.on('error', done);
  });

  /** The payload of a token signed by us (a click's with its destination), or a 404 page sent. */
  function signed(kind: LinkKind, token: string, reply: FastifyReply): LinkPayload | undefined {
    const payload = readLinkToken(secret, kind, token);
    if (!payload || (kind === 'c' && !payload.u)) {
      void reply.code(404).type('text/html; charset=utf-8').send(LINK_NOT_FOUND);
      return undefined;
    }
    return payload;
  }

  /**
   * The payload of a signed token, its message's organization and whether the message is a
   * broadcast about no topic (its unsubscribe is from all broadcasts), or a 404 page sent.
   */
  async function link(kind: LinkKind, token: string, reply: FastifyReply): Promise<(LinkPayload & { organizationId: string; allBroadcasts: boolean }) | undefined> {
    const payload = signed(kind, token, reply);
    if (!payload) return undefined;
    const { rows } = await pg.query<{ organization_id: string; kind: string }>('SELECT organization_id, kind FROM mail_messages WHERE id = $1', [payload.m]);
    if (!rows[0]) {
      void reply.code(404).type('text/html; charset=utf-8').send(LINK_NOT_FOUND);
      return undefined;
    }
    return { ...payload, organizationId: rows[0].organization_id, allBroadcasts: !payload.t && rows[0].kind === 'broadcast' };
  }

  const record = async (event: NewMailEvent) => {
    await events.publish(await recordEvents(pg, [event]));
  };

  /** Records an open or click within the client's per-IP limit; a store that fails is logged, the answer goes out all the same. */
  async function track(request: FastifyRequest, payload: LinkPayload): Promise<void> {
    const admitted = await failOpen(log, 'mail-tracking-ip', async () => (await perIp.hit(clientLimitKey(request))).allowed, true);
    if (!admitted) return;
    try {
      await recordFetch(pg, events, request, payload);
    } catch (err) {
      log.warn({ err }, 'tracking event not recorded');
    }
  }

  app.get('/m/o/:token', {
    schema: {
      tags, security: [], operationId: 'trackOpen', summary: 'Open pixel of a sent message',
      description: `A 1×1 GIF; a fetch records an \`opened\` event of the message. ${BOUNDS}`,
      params: Params,
      response: { 200: { description: 'The pixel.', content: { 'image/gif': { schema: Type.String({ format: 'binary' }) } } }, 404: NOT_A_LINK },
    },
  }, async (request, reply) => {
    const found = signed('o', request.params.token, reply);
    if (!found) return reply;
    await track(request, found);
    return reply.header('cache-control', 'no-store, max-age=0').type('image/gif').send(PIXEL as never);
  });

  app.get('/m/c/:token', {
    schema: {
      tags, security: [], operationId: 'trackClick', summary: 'Click on a link of a sent message',
      description: `Records a \`clicked\` event with the destination, then redirects there exactly as the message had it (query and fragment included). ${BOUNDS}`,
      params: Params,
      response: { 302: { description: 'To the destination.', headers: { location: Type.String() } }, 404: NOT_A_LINK },
    },
  }, async (request, reply) => {
    const found = signed('c', request.params.token, reply);
    if (!found?.u) return reply;
    await track(request, found);
    return reply.header('cache-control', 'no-store, max-age=0').header('referrer-policy', 'no-referrer').redirect(found.u, 302);
  });

  app.get('/m/u/:token', {
    schema: {
      tags, security: [], operationId: 'unsubscribePage', summary: 'Unsubscribe and preferences page',
      description: 'The recipient\'s preferences: every topic of the organization with its effective state, as a form posted to `/m/u/{token}/preferences`, and for a message about a topic a button that unsubscribes from it (the one-click POST); for a broadcast about no topic, a button that unsubscribes from all the organization\'s broadcasts (the one-click POST), or a line saying the address gets none. ' +
        'Fetching it changes nothing (mail scanners prefetch links). Where {{{RESEND_UNSUBSCRIBE_URL}}} and {{unsubscribe_url}} lead.',
      params: Params,
      querystring: Type.Object({ saved: Type.Optional(Type.String({ maxLength: 8, description: 'Set after a save: the page says so.' })) }),
      response: { 200: { description: 'The page.', content: HTML }, 404: NOT_A_LINK },
    },
  }, async (request, reply) => {
    const found = await link('u', request.params.token, reply);
    if (!found) return reply;
    if (!found.r) return sendPage(reply, LINK_NOT_FOUND, 404);
    const topics = await topicChoices(pg, found.organizationId, found.r);
    const broadcasts = found.allBroadcasts ? { subscribed: await getsBroadcasts(pg, found.organizationId, found.r) } : undefined;
    return sendPage(reply, page('Email preferences', preferencesHtml({ token: request.params.token, email: found.r, topics, messageTopic: found.t, broadcasts, saved: request.query.saved === '1' })));
  });

  // The page's form: urlencoded fields in a scope of their own (the one-click POST reads no body).
  await app.register(async (scope) => {
    const form: App = scope;
    form.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_request, body, done) => {
      const fields = new URLSearchParams(String(body));
      done(null, { shown: fields.getAll('shown'), topic: fields.getAll('topic') });
    });
    form.post('/m/u/:token/preferences', {
      schema: {
        tags, security: [], operationId: 'savePreferences', summary: 'Save the preferences page',
        description: 'The preferences page\'s form (`application/x-www-form-urlencoded`): each topic in `shown` becomes subscribed when it is also in `topic`, else unsubscribed (only a change is written; the contact is made if the address was none). ' +
          'No cookies, no key: the signed token is the only authority. Answers 303 to the page, which then says the preferences are saved.',
        params: Params,
        body: { content: { 'application/x-www-form-urlencoded': { schema: PreferencesForm } } },
        response: { 303: { description: 'Saved: back to the page.', headers: { location: Type.String() } }, 404: NOT_A_LINK, 415: { description: 'Not a form.', content: HTML } },
      },
    }, async (request, reply) => {
      const found = await link('u', request.params.token, reply);
      if (!found) return reply;
      if (!found.r) return sendPage(reply, LINK_NOT_FOUND, 404);
      const body = request.body as { shown?: string[]; topic?: string[] } | undefined;
      const isForm = /^application\/x-www-form-urlencoded\b/i.test(request.headers['content-type'] ?? '');
      if (!isForm || !body || !Array.isArray(body.shown)) return sendPage(reply, page('Not saved', '<p>Use the form of the preferences page.</p>'), 415);
      const { organizationId, r: email, m: messageId } = found;
      const unsubscribed = await saveChoices(pg, organizationId, email, new Set(body.shown), new Set(body.topic ?? []));
      for (const topicId of unsubscribed) {
        await record({ organization_id: organizationId, message_id: messageId, type: 'unsubscribed', recipient: email, detail: topicId, once_key: `unsubscribed:${messageId}:${topicId}` });
      }
      return reply.code(303).header('cache-control', 'no-store').header('location', `../${request.params.token}?saved=1`).send();
    });
  });

  app.post('/m/u/:token', {
    schema: {
      tags, security: [], operationId: 'unsubscribe', summary: 'One-click unsubscribe (RFC 8058)',
      description: 'Unsubscribes the recipient from the message\'s topic only (no other topic, no other status changes); from a broadcast about no topic, from all the organization\'s broadcasts (the contact\'s status becomes `unsubscribed`, Resend\'s `unsubscribed: true`; its transactional mail is not affected). Any body (`List-Unsubscribe=One-Click` form-encoded, multipart or empty), no cookies, no key. Repeating it changes nothing more.',
      params: Params,
      response: { 200: { description: 'Unsubscribed.', content: HTML }, 404: NOT_A_LINK },
    },
  }, async (request, reply) => {
    const found = await link('u', request.params.token, reply);
    if (!found) return reply;
    if (found.r && found.allBroadcasts) {
      const { organizationId, r: email, m: messageId } = found;
      await unsubscribeFromBroadcasts(pg, organizationId, email);
      await record({ organization_id: organizationId, message_id: messageId, type: 'unsubscribed', recipient: email, detail: null, once_key: `unsubscribed:${messageId}:broadcasts` });
      return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page('Unsubscribed', `<p>${escapeHtml(email)} will get no more broadcasts from this sender.</p>`));
    }
    // A link without a topic (the placeholder in transactional mail about none) has no one-click unsubscribe: its page has the choices.
    if (!found.r || !found.t) return sendPage(reply, page('Not a one-click link', '<p>Open this link to choose the emails you get.</p>'), 404);
    const { organizationId, r: email, t: topicId, m: messageId } = found;
    // The contact is made if the address was not one (a transactional message about a topic).
    await pg.query(
      `WITH ${contactOfAddressCte('$1', '$2')}
       INSERT INTO mail_topic_subscriptions (topic_id, contact_id, subscribed)
       SELECT t.id, contact.id, false FROM contact, mail_topics t WHERE t.id = $3 AND t.organization_id = $1
       ON CONFLICT (topic_id, contact_id) DO UPDATE SET subscribed = false, updated_at = now()`,
      [organizationId, email, topicId],
    );
    await record({ organization_id: organizationId, message_id: messageId, type: 'unsubscribed', recipient: email, detail: topicId, once_key: `unsubscribed:${messageId}:${topicId}` });
    return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page('Unsubscribed', `<p>${escapeHtml(email)} will get no more of these emails.</p>`));
  });
}
