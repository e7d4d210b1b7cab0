// Every link change reaches the compacted links.changelog topic as the link's
// whole state, and a change committed without being published (a crash right
// after the commit) is published by the outbox relay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LinkState } from '../../../src/links/changelog/link-state.ts';
import { LifetimeScans } from '../../../src/links/scans/lifetime-scans.ts';
import { LinkStore } from '../../../src/links/short-links/link-store.ts';
import { client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { readTopic } from '../../support/topic-reader.ts';
import { eventually } from '../../support/env.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';

let ingress: TestIngress;
let api: ReturnType<typeof client>;
let workspaceId: string;

// Its own databases: see vitest.config.ts (why this file may run side by side).
useOwnDatabases();

beforeAll(async () => {
  ingress = await startIngress();
  const ws = await workspaceWithKey(ingress.url);
  workspaceId = ws.workspaceId;
  api = client(ingress.url, ws.key);
});
afterAll(async () => {
  await ingress?.close();
});

describe('links.changelog', () => {
  it('carries each change as the whole new state, keyed by shortId, with growing versions', async () => {
    const shortId = `log-${Date.now()}`;
    const { body: link } = await api.post('/api/v1/links', { destination: 'https://example.com/v1', shortId, tags: ['t'], scanLimit: 3, expiresAt: '2099-01-01T00:00:00Z' });
    await api.patch(`/api/v1/links/${link.id}`, { destination: 'https://example.com/v2' });
    await api.delete(`/api/v1/links/${link.id}`);
    const messages = await readTopic<LinkState>(ingress.platform.config, 'links.changelog', (m) => m.filter((x) => x.key === shortId).length >= 3);
    const mine = messages.filter((m) => m.key === shortId).map((m) => m.value);
    expect(mine.map((s) => s.version)).toEqual([1, 2, 3]);
    expect(mine.map((s) => s.destination)).toEqual(['https://example.com/v1', 'https://example.com/v2', 'https://example.com/v2']);
    expect(mine.map((s) => s.isActive)).toEqual([true, true, false]);
    expect(mine[0]).toMatchObject({ id: link.id, workspaceId, shortId, tags: ['t'], scanLimit: 3, expiresAt: Date.parse('2099-01-01T00:00:00Z'), iosUrl: null });
  });

  it('publishes a committed change that was never published, through the outbox relay', async () => {
    // A change committed by a process that died before publishing: only the outbox row exists.
    const store = new LinkStore(ingress.platform.pg, new LifetimeScans(ingress.platform.clickhouse));
    const row = await store.create(workspaceId, { destination: 'https://example.com/orphan', shortId: `orphan-${Date.now()}` });
    const messages = await readTopic<LinkState>(ingress.platform.config, 'links.changelog', (m) => m.some((x) => x.key === row.short_id), 15_000);
    expect(messages.find((m) => m.key === row.short_id)?.value.destination).toBe('https://example.com/orphan');
    // The relay deletes the outbox row just after Kafka acknowledged the message, so a fast reader may see the message first.
    const left = async () => Number((await ingress.platform.pg.query('SELECT count(*) AS n FROM link_changelog_outbox WHERE link_id = $1', [row.id])).rows[0].n);
    await eventually(async () => (await left()) === 0, 5000, 50);
    expect(await left()).toBe(0);
  });
});
