// Scan limits: a link's scans are counted (bots too, exactly once) from what the
// scan sink stored in ClickHouse; after each batch the sink closes the links that
// reached their limit, and every ingress then refuses them. Concurrent scans are
// held to the limit at the ingress by a Redis counter seeded from the same count.
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostWorkers } from '../../../src/platform/actors/host.ts';
import type { WorkerRuntime } from '../../../src/platform/actors/runtime.ts';
import { scanLimitKey } from '../../../src/links/redirect/scan-limit-guard.ts';
import { LifetimeScans } from '../../../src/links/scans/lifetime-scans.ts';
import type { ScanEvent } from '../../../src/links/scans/scan-event.ts';
import type { ScanLimitCloser } from '../../../src/links/scans/scan-limit-closer.ts';
import { scanSinkKind } from '../../../src/links/scans/scan-sink.ts';
import { scansTopic } from '../../../topics/scans.ts';
import { client, freshIp, startIngress, type TestIngress } from '../../support/ingress.ts';
import { scanSink } from '../../support/links/scans.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { eventually } from '../../support/env.ts';
import { readTopic } from '../../support/topic-reader.ts';

let one: TestIngress;
let two: TestIngress;
let api: ReturnType<typeof client>;
let workspaceId: string;
let sink: WorkerRuntime<unknown, unknown> | undefined;

const startSink = async (kind = scanSink(one.platform)) => {
  [sink] = await hostWorkers(one.platform, [kind]);
};
const stopSink = async () => {
  await sink?.stop();
  sink = undefined;
};

beforeAll(async () => {
  [one, two] = await Promise.all([startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' }), startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' })]);
  const ws = await workspaceWithKey(one.url);
  workspaceId = ws.workspaceId;
  api = client(one.url, ws.key);
  await startSink();
});
afterAll(async () => {
  await stopSink();
  await Promise.all([one?.close(), two?.close()]);
});

const scan = async (base: string, shortId: string, ua = 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0') => {
  const res = await fetch(`${base}/${shortId}`, { redirect: 'manual', headers: { 'x-forwarded-for': freshIp(), 'user-agent': ua, accept: 'application/json' } });
  return { status: res.status, body: await res.text() };
};

/** The link's scans as stored in ClickHouse: what its limit is held to. */
const counted = (linkId: string) => new LifetimeScans(one.platform.clickhouse).of({ id: linkId, workspaceId });

const limitedLink = async (path: string, scanLimit: number) => {
  const { body: link } = await api.post('/api/v1/links', { destination: `https://example.com/${path}`, scanLimit });
  await eventually(async () => !!one.app.redirects.cache.get(link.shortId) && !!two.app.redirects.cache.get(link.shortId), 5000, 20);
  return link as { id: string; shortId: string };
};

describe('scan limit', () => {
  it('admits exactly the limit even under a concurrent burst, closes the link everywhere, and counts each scan once', async () => {
    const link = await limitedLink('limited', 5);
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
    // The sink's durable exhaustion reaches every ingress's cache through links.changelog.
    const closedAt = Date.now();
    for (const ingress of [one, two]) {
      await eventually(async () => ingress.app.redirects.cache.get(link.shortId)?.exhaustedAt != null, 15_000, 10);
    }
    console.log(`scan limit 5: ${over} of 20 concurrent scans passed after the limit; exhaustion in every cache ${Date.now() - closedAt} ms after the burst`);
    const refused = await scan(one.url, link.shortId);
    expect(JSON.parse(refused.body).error.code).toBe('scan_limit_reached');
    // Every scan that was redirected is counted once; refused scans are not scans.
    expect(await counted(link.id)).toBe(5);
    const got = (await api.get(`/api/v1/links/${link.id}`)).body;
    expect(got.exhaustedAt).toBeTruthy();
  });

  it('counts a scan delivered twice (at another offset) only once', async () => {
    const link = await limitedLink('dupes', 1000);
    for (let i = 0; i < 3; i++) expect((await scan(one.url, link.shortId)).status).toBe(302);
    await eventually(async () => (await counted(link.id)) === 3, 15_000, 100);
    const events = (await readTopic<ScanEvent>(one.platform.config, 'scans', (m) => m.filter((x) => x.value.linkId === link.id).length >= 3)).filter((m) => m.value.linkId === link.id);
    await one.platform.publisher.publish(scansTopic, events.map((m) => ({ key: m.key, value: m.value })));
    // One more real scan after the duplicates, so we know the sink has passed them.
    expect((await scan(one.url, link.shortId)).status).toBe(302);
    await eventually(async () => (await counted(link.id)) >= 4, 15_000, 100);
    await new Promise((r) => setTimeout(r, 500));
    expect(await counted(link.id)).toBe(4);
  });

  it('counts a scan another producer wrote with upper-case ids', async () => {
    const link = await limitedLink('upper-case', 1000);
    expect((await scan(one.url, link.shortId)).status).toBe(302);
    await eventually(async () => (await counted(link.id)) === 1, 15_000, 100);
    const [stored] = (await readTopic<ScanEvent>(one.platform.config, 'scans', (m) => m.some((x) => x.value.linkId === link.id))).filter((m) => m.value.linkId === link.id);
    const { value } = stored!;
    const upper = { ...value, scanId: randomUUID().toUpperCase(), linkId: value.linkId.toUpperCase(), workspaceId: value.workspaceId.toUpperCase() };
    await one.platform.publisher.publish(scansTopic, [{ key: upper.workspaceId, value: upper }]);
    await eventually(async () => (await counted(link.id)) === 2, 15_000, 100);
  });

  it('reopens when the limit is raised above the scans so far, and closes at once when lowered to them', async () => {
    const link = await limitedLink('limit2', 2);
    let redirected = 0;
    const scanOf = async (base: string) => {
      const { status } = await scan(base, link.shortId);
      if (status === 302) redirected++;
      return status;
    };
    await scanOf(one.url);
    await scanOf(one.url);
    await eventually(async () => (await scanOf(one.url)) === 410, 5000, 20);
    await eventually(async () => (await counted(link.id)) === 2, 15_000, 100);
    const raised = await api.patch(`/api/v1/links/${link.id}`, { scanLimit: 10 });
    expect(raised.status).toBe(200);
    expect(raised.body.exhaustedAt).toBeNull();
    await eventually(async () => (await scanOf(one.url)) === 302, 2000, 20);
    await eventually(async () => (await counted(link.id)) >= 3, 15_000, 100);
    const lowered = await api.patch(`/api/v1/links/${link.id}`, { scanLimit: 1 });
    expect(lowered.body.exhaustedAt).toBeTruthy();
    // Until the change reaches the other ingress, it may still admit under the old limit.
    await eventually(async () => (await scanOf(two.url)) === 410, 2000, 20);
    const removed = await api.patch(`/api/v1/links/${link.id}`, { scanLimit: null });
    expect(removed.body.exhaustedAt).toBeNull();
    await eventually(async () => (await scanOf(two.url)) === 302, 2000, 20);
    // A limit given later counts the scans from before it: one more than so far leaves one.
    await eventually(async () => (await counted(link.id)) === redirected, 15_000, 100);
    const limit = redirected + 1;
    const again = await api.patch(`/api/v1/links/${link.id}`, { scanLimit: limit });
    expect(again.body.exhaustedAt).toBeNull();
    await eventually(async () => two.app.redirects.cache.get(link.shortId)?.scanLimit === limit, 5000, 20);
    expect(await scanOf(two.url)).toBe(302);
    expect(await scanOf(one.url)).toBe(410);
  });

  it('closes a link whose scans a sink stored but could not close, when the batch is replayed by the next sink', async () => {
    const link = await limitedLink('replayed', 2);
    await stopSink();
    // A sink that stores scans and then loses Postgres before closing (an outage: retried, never
    // committed) until it is stopped, as a killed sink would be.
    let closingTried = 0;
    await startSink(
      scanSinkKind(one.platform.clickhouse, one.platform.pg, {
        afterStored: async () => {
          closingTried++;
          throw Object.assign(new Error('connection terminated unexpectedly'), { code: 'ECONNRESET' });
        },
      } as unknown as ScanLimitCloser),
    );
    expect((await scan(one.url, link.shortId)).status).toBe(302);
    expect((await scan(two.url, link.shortId)).status).toBe(302);
    await eventually(async () => (await counted(link.id)) === 2 && closingTried > 0, 15_000, 100);
    // Redis still refuses a third scan; the link itself is not closed yet.
    expect((await scan(one.url, link.shortId)).status).toBe(410);
    expect((await api.get(`/api/v1/links/${link.id}`)).body.exhaustedAt).toBeNull();
    await stopSink();
    await startSink();
    await eventually(async () => (await api.get(`/api/v1/links/${link.id}`)).body.exhaustedAt !== null, 30_000, 100);
    await eventually(async () => two.app.redirects.cache.get(link.shortId)?.exhaustedAt != null, 10_000, 20);
    expect(await counted(link.id)).toBe(2);
  });

  it('seeds a lost Redis counter from the scans stored in ClickHouse', async () => {
    const link = await limitedLink('seeded', 3);
    expect((await scan(one.url, link.shortId)).status).toBe(302);
    expect((await scan(two.url, link.shortId)).status).toBe(302);
    await eventually(async () => (await counted(link.id)) === 2, 15_000, 100);
    // Redis forgets the counter (a restart without persistence): the next admission counts again.
    await one.platform.redis.del(scanLimitKey(link.id));
    const burst = await Promise.all(Array.from({ length: 6 }, (_, i) => scan(i % 2 ? one.url : two.url, link.shortId)));
    expect(burst.filter((r) => r.status === 302)).toHaveLength(1);
    expect(Number(await one.platform.redis.get(scanLimitKey(link.id)))).toBe(3);
  });

  it('refuses HEAD like GET once the limit is reached, before the sink closes the link; HEAD counts nothing', async () => {
    const head = async (base: string, shortId: string) =>
      (await fetch(`${base}/${shortId}`, { method: 'HEAD', redirect: 'manual', headers: { 'x-forwarded-for': freshIp(), accept: 'application/json' } })).status;
    // No sink: the link is never marked exhausted, so only the ingresses' count can refuse it.
    await stopSink();
    try {
      const link = await limitedLink('head-limit', 2);
      expect(await head(one.url, link.shortId)).toBe(302);
      expect(await head(two.url, link.shortId)).toBe(302);
      expect((await scan(one.url, link.shortId)).status).toBe(302);
      expect((await scan(two.url, link.shortId)).status).toBe(302);
      expect((await scan(one.url, link.shortId)).status).toBe(410);
      expect(await head(one.url, link.shortId)).toBe(410);
      expect(await head(two.url, link.shortId)).toBe(410);
      expect(one.app.redirects.cache.get(link.shortId)?.exhaustedAt).toBeNull();
      expect(Number(await one.platform.redis.get(scanLimitKey(link.id)))).toBe(2);
      // A counter Redis lost is seeded for HEAD too (here from the scans stored: none, no sink), and HEAD takes nothing from it.
      await one.platform.redis.del(scanLimitKey(link.id));
      expect(await head(two.url, link.shortId)).toBe(302);
      expect(Number(await one.platform.redis.get(scanLimitKey(link.id)))).toBe(0);
    } finally {
      await startSink();
    }
  });

  describe('while ClickHouse does not answer', () => {
    let silent: Server;
    const sockets = new Set<Socket>();
    let blind: TestIngress;
    let blindApi: ReturnType<typeof client>;

    beforeAll(async () => {
      // Accepts connections and never answers, as a hung server would.
      silent = createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const { port } = silent.address() as { port: number };
      blind = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000', CLICKHOUSE_URL: `http://127.0.0.1:${port}`, SCAN_LIMIT_SEED_WAIT_MS: '500', SCAN_LIMIT_COUNT_TIMEOUT_MS: '2000' });
      blindApi = client(blind.url, (await workspaceWithKey(one.url)).key);
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await blind?.close();
      await new Promise((resolve) => silent?.close(resolve));
    });

    it('refuses to set a scan limit with 503 scan_count_unavailable and changes nothing; other changes go through', async () => {
      const { body: link } = await blindApi.post('/api/v1/links', { destination: 'https://example.com/blind' });
      const started = Date.now();
      const refused = await blindApi.patch(`/api/v1/links/${link.id}`, { scanLimit: 5, destination: 'https://example.com/changed' });
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe('scan_count_unavailable');
      expect(refused.headers.get('retry-after')).toBe('5');
      const unchanged = (await blindApi.get(`/api/v1/links/${link.id}`)).body;
      expect(unchanged).toMatchObject({ scanLimit: null, destination: 'https://example.com/blind' });
      // A missing link is still a 404, not a 503.
      expect((await blindApi.patch('/api/v1/links/00000000-0000-4000-8000-000000000000', { scanLimit: 5 })).status).toBe(404);
      const other = await blindApi.patch(`/api/v1/links/${link.id}`, { destination: 'https://example.com/changed' });
      expect(other.status).toBe(200);
      expect(other.body.destination).toBe('https://example.com/changed');
      // Removing a limit needs no count, and neither does sending the same limit again.
      expect((await blindApi.patch(`/api/v1/links/${link.id}`, { scanLimit: null })).status).toBe(200);
      const { body: limited } = await blindApi.post('/api/v1/links', { destination: 'https://example.com/blind-limited', scanLimit: 7 });
      await one.platform.redis.set(scanLimitKey(limited.id), '3');
      expect((await blindApi.patch(`/api/v1/links/${limited.id}`, { scanLimit: 7, tags: ['same'] })).status).toBe(200);
      // Nor does it start the ingresses' counter again.
      expect(await one.platform.redis.get(scanLimitKey(limited.id))).toBe('3');
    });

    it('refuses the limits of a bulk request without waiting for each count', async () => {
      const created = await Promise.all([1, 2, 3, 4, 5].map(async (n) => (await blindApi.post('/api/v1/links', { destination: `https://example.com/blind-bulk-${n}` })).body));
      const started = Date.now();
      const res = await blindApi.post('/api/v1/links/bulk', { operations: created.map((l) => ({ action: 'update', id: l.id, changes: { scanLimit: 5 } })) });
      const took = Date.now() - started;
      expect(res.status).toBe(200);
      expect(res.body.results.map((r: { status: number; error?: { code: string } }) => [r.status, r.error?.code])).toEqual(created.map(() => [503, 'scan_count_unavailable']));
      // One count waits its 2 s; after it failed, the others are refused at once (5 × 2 s otherwise).
      expect(took).toBeLessThan(8000);
    });

    it('lets redirects of a limited link through when its counter cannot be seeded, after a bounded wait', async () => {
      const link = await limitedLink('blind-redirect', 100);
      await eventually(async () => !!blind.app.redirects.cache.get(link.shortId), 5000, 20);
      await one.platform.redis.del(scanLimitKey(link.id));
      const started = Date.now();
      const results = await Promise.all(Array.from({ length: 3 }, () => scan(blind.url, link.shortId)));
      const waited = Date.now() - started;
      expect(results.map((r) => r.status)).toEqual([302, 302, 302]);
      expect(waited).toBeLessThan(5000);
      console.log(`ClickHouse silent: 3 concurrent redirects of a limited link answered in ${waited} ms`);
    });
  });
});
