// Scan limits: the scan-limit actor counts scans (bots too, exactly once)
// and closes a link when it reaches its limit; every ingress then refuses it.
// Concurrent scans can pass the limit only while the exhaustion is on its way;
// the test measures how many did.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostWorkers } from '../../../src/platform/actors/host.ts';
import { LinkChangelog } from '../../../src/links/changelog/link-changelog.ts';
import { scanLimitKind } from '../../../src/links/scans/scan-limit-actor.ts';
import { client, freshIp, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { eventually } from '../../support/env.ts';
import { readTopic } from '../../support/topic-reader.ts';
import type { ScanEvent } from '../../../src/links/scans/scan-event.ts';
import { scansTopic } from '../../../topics/scans.ts';

let one: TestIngress;
let two: TestIngress;
let api: ReturnType<typeof client>;
let stopActor: () => Promise<void>;

beforeAll(async () => {
  [one, two] = await Promise.all([startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' }), startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' })]);
  api = client(one.url, (await workspaceWithKey(one.url)).key);
  const [runtime] = await hostWorkers(one.platform, [scanLimitKind(one.platform.pg, new LinkChangelog(one.platform.pg, one.platform.publisher, one.platform.log))]);
  stopActor = () => runtime!.stop();
});
afterAll(async () => {
  await stopActor?.();
  await Promise.all([one?.close(), two?.close()]);
});

const scan = async (base: string, shortId: string, ua = 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0') => {
  const res = await fetch(`${base}/${shortId}`, { redirect: 'manual', headers: { 'x-forwarded-for': freshIp(), 'user-agent': ua, accept: 'application/json' } });
  return { status: res.status, body: await res.text() };
};

const counted = async (linkId: string) =>
  Number((await one.platform.pg.query('SELECT coalesce((SELECT scans FROM link_scan_counts WHERE link_id = $1), 0) AS n', [linkId])).rows[0].n);

describe('scan limit', () => {
  it('admits exactly the limit even under a concurrent burst, closes the link everywhere, and counts each scan once', async () => {
    const { body: link } = await api.post('/api/v1/links', { destination: 'https://example.com/limited', scanLimit: 5 });
    await eventually(async () => !!one.app.redirects.cache.get(link.shortId) && !!two.app.redirects.cache.get(link.shortId), 5000, 20);
    // A bot's redirect uses up the allowance like any other (a User-Agent is the client's to choose).
    expect((await scan(one.url, link.shortId, 'Googlebot/2.1 (+http://www.google.com/bot.html)')).status).toBe(302);
    let passed = 0;
    for (let i = 0; i < 4; i++) if ((await scan(i % 2 ? one.url : two.url, link.shortId)).status === 302) passed++;
    expect(passed).toBe(4);
    // A burst right after the fifth scan, on both instances: the admission guard holds the line.
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => scan(i % 2 ? one.url : two.url, link.shortId)));
    const over = burst.filter((r) => r.status === 302).length;
    expect(over).toBe(0);
    expect(burst.every((r) => r.status === 410)).toBe(true);
    // The actor's durable exhaustion reaches every ingress's cache through links.changelog.
    const closedAt = Date.now();
    for (const ingress of [one, two]) {
      await eventually(async () => ingress.app.redirects.cache.get(link.shortId)?.exhaustedAt != null, 10_000, 10);
    }
    console.log(`scan limit 5: ${over} of 20 concurrent scans passed after the limit; exhaustion in every cache ${Date.now() - closedAt} ms after the burst`);
    const refused = await scan(one.url, link.shortId);
    expect(JSON.parse(refused.body).error.code).toBe('scan_limit_reached');
    // Every scan that was redirected is counted once; refused scans are not scans.
    await eventually(async () => (await counted(link.id)) === 5, 10_000, 100);
    const got = (await api.get(`/api/v1/links/${link.id}`)).body;
    expect(got.exhaustedAt).toBeTruthy();
  });

  it('counts a scan delivered twice (at another offset) only once', async () => {
    const { body: link } = await api.post('/api/v1/links', { destination: 'https://example.com/dupes', scanLimit: 1000 });
    await eventually(async () => !!one.app.redirects.cache.get(link.shortId), 5000, 20);
    for (let i = 0; i < 3; i++) expect((await scan(one.url, link.shortId)).status).toBe(302);
    await eventually(async () => (await counted(link.id)) === 3, 10_000, 100);
    const events = (await readTopic<ScanEvent>(one.platform.config, 'scans', (m) => m.filter((x) => x.value.linkId === link.id).length >= 3)).filter((m) => m.value.linkId === link.id);
    await one.platform.publisher.publish(scansTopic, events.map((m) => ({ key: m.key, value: m.value })));
    // One more real scan after the duplicates, so we know the actor has passed them.
    expect((await scan(one.url, link.shortId)).status).toBe(302);
    await eventually(async () => (await counted(link.id)) >= 4, 10_000, 100);
    await new Promise((r) => setTimeout(r, 500));
    expect(await counted(link.id)).toBe(4);
  });

  it('reopens when the limit is raised above the scans so far, and closes at once when lowered to them', async () => {
    const { body: link } = await api.post('/api/v1/links', { destination: 'https://example.com/limit2', scanLimit: 2 });
    await eventually(async () => !!one.app.redirects.cache.get(link.shortId), 5000, 20);
    await scan(one.url, link.shortId);
    await scan(one.url, link.shortId);
    await eventually(async () => (await scan(one.url, link.shortId)).status === 410, 5000, 20);
    const raised = await api.patch(`/api/v1/links/${link.id}`, { scanLimit: 10 });
    expect(raised.body.exhaustedAt).toBeNull();
    await eventually(async () => (await scan(one.url, link.shortId)).status === 302, 2000, 20);
    await eventually(async () => (await counted(link.id)) >= 3, 10_000, 100);
    const lowered = await api.patch(`/api/v1/links/${link.id}`, { scanLimit: 1 });
    expect(lowered.body.exhaustedAt).toBeTruthy();
    await eventually(async () => (await scan(two.url, link.shortId)).status === 410, 2000, 20);
    const removed = await api.patch(`/api/v1/links/${link.id}`, { scanLimit: null });
    expect(removed.body.exhaustedAt).toBeNull();
    await eventually(async () => (await scan(two.url, link.shortId)).status === 302, 2000, 20);
  });
});
