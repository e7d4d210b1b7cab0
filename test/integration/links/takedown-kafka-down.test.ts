// Taking a link down works while Kafka is down: a link deleted, deactivated or
// changed through one ingress stops (or changes) on another within the stated
// bound, REDIRECT_REVALIDATE_MS (5 s, the default) plus one look at Postgres,
// though links.changelog cannot carry the change. Stops and restarts a Kafka
// broker of the file's own (ownKafka); Kafka is started again however the test
// ends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../support/env.ts';
import { client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { scan } from '../../support/links/scans.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { ownKafka, type OwnKafka } from '../../support/kafka-cluster.ts';

/** The stated bound: one revalidation interval (5 s by default) and the time of a look, with room for a loaded machine. */
const BOUND_MS = 10_000;
let one: TestIngress;
let two: TestIngress;
let api: ReturnType<typeof client>;
let kafka: OwnKafka;

beforeAll(async () => {
  kafka = await ownKafka();
  const env = { API_RATE_LIMIT_PER_MINUTE: '100000', ...kafka.env };
  [one, two] = await Promise.all([startIngress(env), startIngress(env)]);
  api = client(one.url, (await workspaceWithKey(one.url)).key);
}, 120_000);

afterAll(async () => {
  await Promise.all([one?.close(), two?.close()]);
  await kafka?.release();
});

describe('takedown while Kafka is down', () => {
  it('stops redirecting a deleted or deactivated link on another ingress within the bound, and follows a changed destination', async () => {
    const create = async (path: string) => (await api.post('/api/v1/links', { destination: `https://example.com/${path}` })).body as { id: string; shortId: string };
    const [deleted, deactivated, moved, kept] = [await create('deleted'), await create('deactivated'), await create('moved'), await create('kept')];
    // The second ingress knows them all through the changelog, while Kafka is up.
    await eventually(async () => [deleted, deactivated, moved, kept].every((l) => two.app.redirects.cache.get(l.shortId)), 10_000, 20);
    for (const l of [deleted, deactivated, moved, kept]) expect((await scan(two.url, l.shortId)).status).toBe(302);

    await kafka.stop();
    try {
      // Each change, from the start of its request (which commits at once, then waits up to 2 s for
      // Kafka before answering), until the other ingress answers with it.
      const changed = async (what: string, write: () => Promise<number>, seen: () => Promise<boolean>) => {
        const started = Date.now();
        expect(await write()).toBe(200);
        await eventually(seen, BOUND_MS + 5000, 100);
        const took = Date.now() - started;
        console.log(`Kafka down: a link ${what} through one ingress changed on the other after ${took} ms`);
        return took;
      };
      const refused = async (l: { shortId: string }) => {
        const res = await scan(two.url, l.shortId, { accept: 'application/json' });
        return res.status === 410 && res.body.includes('link_inactive');
      };
      // (Its outbox relay may pick up a change by chance and apply it before failing to publish it; so
      // may another ingress's. Three changes in a row: the look at Postgres is what brings them all.)
      const took = [
        await changed('deleted', async () => (await api.delete(`/api/v1/links/${deleted.id}`)).status, () => refused(deleted)),
        await changed('deactivated', async () => (await api.patch(`/api/v1/links/${deactivated.id}`, { isActive: false })).status, () => refused(deactivated)),
        await changed('moved', async () => (await api.patch(`/api/v1/links/${moved.id}`, { destination: 'https://example.com/elsewhere' })).status,
          async () => /^https:\/\/example\.com\/elsewhere\?svc_cid=/.test((await scan(two.url, moved.shortId)).location ?? '')),
      ];
      for (const ms of took) expect(ms).toBeLessThan(BOUND_MS);
      // The writing ingress had its own changes at once; links nobody changed still redirect.
      expect((await scan(one.url, deleted.shortId)).status).toBe(410);
      expect((await scan(two.url, kept.shortId)).status).toBe(302);
    } finally {
      await kafka.start();
    }
  }, 300_000);
});
