// The public tracking ends (/m/o open pixel, /m/c click redirect) under careless and hostile
// clients, through real HTTP: a loop from one address records a bounded number of events and
// the report counts a message once; past the per-IP limit a person still gets the pixel and
// the redirect but nothing is recorded, and another address is unaffected; machines' fetches
// (privacy proxies, scanners, HEAD checks, clicks on arrival) are kept, flagged, and not counted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, freshIp, startIngress, type TestIngress } from '../../support/ingress.ts';
import { organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { readTopic } from '../../support/topic-reader.ts';
import { linkToken } from '../../../src/mail/tracking/tracking-links.ts';

let ingress: TestIngress;

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_SEC: '1000' });
}, 60_000);
afterAll(async () => ingress?.close());

const db = () => ingress.platform.pg;
const secret = () => ingress.platform.config.MAIL_LINK_SECRET as string;

/** A person's mail client (Apple Mail on a Mac, which shows images itself). */
const MAIL_APP = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)';
const DESTINATION = 'https://example.com/spring?utm=mail#top';

/** A broadcast of a fresh organization, with messages that reached their recipients `deliveredAgoMs` ago. */
async function broadcastWithMessages(count: number, deliveredAgoMs = 3_600_000) {
  const org = await organizationWithKey(ingress.url, { rate_limit: 1000 });
  const domain = await verifiedDomain(ingress.url, org.key, undefined, 'track.example.org');
  await call(ingress.url, 'POST', '/api/v1/topics', { key: org.key, body: { slug: 'news', name: 'News', default_subscription: 'opt_in' } });
  const broadcast = await call(ingress.url, 'POST', '/api/v1/broadcasts', { key: org.key, body: { name: 'B', from: `news@${domain.name}`, topic: 'news', subject: 'Hi', html: '<p>Hi</p>' } });
  expect(broadcast.status, JSON.stringify(broadcast.body)).toBe(201);
  const messages: string[] = [];
  for (let i = 0; i < count; i++) {
    const sent = await call(ingress.url, 'POST', '/emails', { key: org.key, body: { from: `news@${domain.name}`, to: [`r${i}@example.net`], subject: 'Hi', html: '<p>Hi</p>' } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    messages.push(sent.body.id);
  }
  // The fan-out's and the sender's part, written as they would: the recipients of the broadcast, delivered.
  await db().query(
    `INSERT INTO mail_broadcast_recipients (broadcast_id, contact_id, state, message_id) SELECT $1, gen_random_uuid(), 'queued', m FROM unnest($2::uuid[]) m`,
    [broadcast.body.id, messages],
  );
  await db().query(
    `INSERT INTO mail_events (organization_id, message_id, type, once_key, occurred_at) SELECT $1, m, 'delivered', 'delivered:' || m, now() - $3 * interval '1 millisecond' FROM unnest($2::uuid[]) m`,
    [org.organizationId, messages, deliveredAgoMs],
  );
  const report = async () => (await call(ingress.url, 'GET', `/api/v1/broadcasts/${broadcast.body.id}/report`, { key: org.key })).body;
  return { org, broadcastId: broadcast.body.id as string, messages, report };
}

const open = (messageId: string, ip: string, init: { method?: string; userAgent?: string } = {}) =>
  fetch(`${ingress.url}/m/o/${linkToken(secret(), 'o', { m: messageId })}`, { method: init.method ?? 'GET', headers: { 'x-forwarded-for': ip, 'user-agent': init.userAgent ?? MAIL_APP } });

const click = (messageId: string, ip: string, init: { method?: string; userAgent?: string } = {}) =>
  fetch(`${ingress.url}/m/c/${linkToken(secret(), 'c', { m: messageId, u: DESTINATION })}`, { method: init.method ?? 'GET', redirect: 'manual', headers: { 'x-forwarded-for': ip, 'user-agent': init.userAgent ?? MAIL_APP } });

interface EventRow { type: string; url: string | null; detail: string | null; automated: boolean }
const eventsOf = async (messageId: string, type: string) =>
  (await db().query<EventRow>('SELECT * FROM mail_events WHERE message_id = $1 AND type = $2 ORDER BY occurred_at', [messageId, type])).rows;

/** Runs `n` calls of `one`, `parallel` at a time. */
async function loop(n: number, parallel: number, one: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next < n) await one(next++);
  }));
}

describe('tracking under a loop', () => {
  it('N opens and clicks from one address record one open and one click, the report counts the message once, and past the per-IP limit a person still gets the pixel and the redirect while another address is unaffected', async () => {
    const { org, messages: [looped, later], report } = await broadcastWithMessages(2);
    const ip = freshIp();
    const N = 320;
    await loop(N, 8, async () => {
      const res = await open(looped!, ip);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/gif');
      await res.arrayBuffer();
    });
    const clicker = freshIp();
    await loop(30, 8, async () => {
      const res = await click(looped!, clicker);
      expect([res.status, res.headers.get('location')]).toEqual([302, DESTINATION]);
    });

    // Bounded: one open and one click kept, one outbox row and one mail.events message each.
    expect(await eventsOf(looped!, 'opened')).toHaveLength(1);
    expect(await eventsOf(looped!, 'clicked')).toHaveLength(1);
    const r = await report();
    expect([r.totals.opened, r.totals.clicked, r.top_links]).toEqual([1, 1, [{ url: DESTINATION, clicks: 1 }]]);

    // The looping address is past its limit: the pixel and the redirect still answer, nothing is recorded.
    const limited = await open(later!, ip);
    expect([limited.status, limited.headers.get('content-type')]).toEqual([200, 'image/gif']);
    const limitedClick = await click(later!, ip);
    expect([limitedClick.status, limitedClick.headers.get('location')]).toEqual([302, DESTINATION]);
    expect(await eventsOf(later!, 'opened')).toHaveLength(0);
    expect(await eventsOf(later!, 'clicked')).toHaveLength(0);
    // Another address is not limited by it.
    expect((await open(later!, freshIp())).status).toBe(200);
    expect(await eventsOf(later!, 'opened')).toHaveLength(1);
    expect((await report()).totals.opened).toBe(2);

    const records = await readTopic<{ message_id: string; type: string }>(ingress.platform.config, 'mail.events', (all) => all.some((m) => m.value.message_id === later && m.value.type === 'opened'), 30_000);
    const ofLooped = records.filter((m) => m.value.message_id === looped && m.key === org.organizationId).map((m) => m.value.type).sort();
    expect(ofLooped).toEqual(['clicked', 'opened']);
  }, 120_000);
});

describe('automated fetches', () => {
  it('privacy proxies, bots, HEAD checks and clicks on arrival are kept flagged and not counted; a person after them is counted', async () => {
    const { messages: [proxied, scanned, gmail], report } = await broadcastWithMessages(3);
    // Apple Mail Privacy Protection fetches every image on arrival as "Mozilla/5.0".
    expect((await open(proxied!, freshIp(), { userAgent: 'Mozilla/5.0' })).status).toBe(200);
    // A link scanner by its User-Agent, and a HEAD check of the same link.
    expect((await click(scanned!, freshIp(), { userAgent: 'Mozilla/5.0 (compatible; Barracuda Sentinel; +https://barracuda.com) bot' })).status).toBe(302);
    expect((await click(scanned!, freshIp(), { method: 'HEAD' })).status).toBe(302);
    expect((await open(scanned!, freshIp(), { method: 'HEAD' })).status).toBe(200);

    const flagged = [...(await eventsOf(proxied!, 'opened')), ...(await eventsOf(scanned!, 'clicked')), ...(await eventsOf(scanned!, 'opened'))];
    expect(flagged.length).toBeGreaterThanOrEqual(3);
    for (const e of flagged) {
      expect(e.automated).toBe(true);
      expect(JSON.parse(e.detail!)).toMatchObject({ automated: true, reason: expect.any(String) });
    }
    expect(JSON.parse((await eventsOf(proxied!, 'opened'))[0]!.detail!).reason).toBe('privacy_proxy');
    let r = await report();
    expect([r.totals.opened, r.totals.clicked, r.top_links]).toEqual([0, 0, []]);

    // Gmail's image proxy fetches when the person opens the message: a person's open.
    expect((await open(gmail!, freshIp(), { userAgent: 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)' })).status).toBe(200);
    // The person behind the proxied message opens it for real later.
    expect((await open(proxied!, freshIp())).status).toBe(200);
    expect((await eventsOf(proxied!, 'opened')).map((e) => e.automated).sort()).toEqual([false, true]);
    expect((await eventsOf(gmail!, 'opened')).map((e) => e.automated)).toEqual([false]);
    r = await report();
    expect([r.totals.opened, r.totals.clicked]).toEqual([2, 0]);
  }, 60_000);

  it('a click in the first seconds after delivery is a scanner\'s; a later one counts', async () => {
    const { messages: [fresh], report } = await broadcastWithMessages(1, 0);
    expect((await click(fresh!, freshIp())).status).toBe(302);
    const [event] = await eventsOf(fresh!, 'clicked');
    expect([event!.automated, JSON.parse(event!.detail!).reason]).toEqual([true, 'arrival_click']);
    expect((await report()).totals.clicked).toBe(0);
    // Delivered a minute ago: a person's click.
    await db().query("UPDATE mail_events SET occurred_at = now() - interval '1 minute' WHERE message_id = $1 AND type = 'delivered'", [fresh]);
    expect((await click(fresh!, freshIp())).status).toBe(302);
    expect((await eventsOf(fresh!, 'clicked')).map((e) => e.automated)).toEqual([true, false]);
    const r = await report();
    expect([r.totals.opened, r.totals.clicked, r.top_links]).toEqual([1, 1, [{ url: DESTINATION, clicks: 1 }]]);
  }, 60_000);
});
