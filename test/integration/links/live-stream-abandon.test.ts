// Streams whose client leaves while they are being opened (the hub's consumer still starting, which
// may take up to LIVE_STREAM start wait): nothing of them stays held. A page stream's place, an API
// stream's Redis slot, the hub's subscription and its heartbeat are all given back, so the workspace
// can open its full allowance again at once; and an ingress that stops while streams are opening
// ends or refuses them all and closes with none left open.
import { request } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PAGE_STREAMS_PER_WORKSPACE } from '../../../src/links/analytics-page/page-stream.ts';
import { LIVE_STREAM_LIMITS } from '../../../src/links/workspaces/plans.ts';
import { client, freshIp, startIngress, type TestIngress } from '../../support/ingress.ts';
import { eventually } from '../../support/env.ts';
import { createdLink } from '../../support/links/ingress-with-workspace.ts';
import { openStream, type SseStream } from '../../support/links/sse-client.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';

let ingress: TestIngress;
const streams: SseStream[] = [];

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000', LIVE_STREAM_HEARTBEAT_MS: '500', LIVE_STREAM_IDLE_STOP_MS: '1000' });
});
afterAll(async () => {
  for (const s of streams) s.close();
  await ingress?.close();
});

/** Sends a stream request and drops it as soon as `leave` resolves; whether an answer (its status) had come by then. */
function abandoned(baseUrl: string, path: string, headers: Record<string, string>, leave: Promise<void>): Promise<{ answered: number | undefined }> {
  return new Promise((resolve) => {
    let answered: number | undefined;
    const req = request(`${baseUrl}${path}`, { headers: { accept: 'text/event-stream', 'x-forwarded-for': freshIp(), ...headers } });
    req.on('response', (res) => {
      answered = res.statusCode;
      res.resume();
    });
    req.on('error', () => {});
    req.end();
    void leave.then(() => {
      req.destroy();
      resolve({ answered });
    });
  });
}

const openAll = async (n: number, open: () => Promise<SseStream>) => {
  const opened: SseStream[] = [];
  for (let i = 0; i < n; i += 50) opened.push(...await Promise.all(Array.from({ length: Math.min(50, n - i) }, open)));
  streams.push(...opened);
  return opened;
};

it('streams left while the hub starts hold nothing: places, Redis slots and subscriptions are all back, and the full allowance opens again', async () => {
  const ws = await workspaceWithKey(ingress.url);
  const api = client(ingress.url, ws.key);
  const link = await createdLink(api, { destination: 'https://example.com/abandoned' });
  const share = (await api.post(`/api/v1/links/${link.id}/analytics/shares`, {})).body.id as string;
  const hub = ingress.app.liveScans;
  // Nothing open yet on this ingress: the first subscribe starts the consumer, and every stream waits for it.
  expect(hub.active).toBe(false);

  // As many of each as the workspace may hold, all dropped once the consumer is starting (before it answers).
  let leave!: () => void;
  const left = new Promise<void>((r) => (leave = r));
  const tries = [
    ...Array.from({ length: PAGE_STREAMS_PER_WORKSPACE }, () => abandoned(ingress.url, `/analytics/${share}/stream`, {}, left)),
    ...Array.from({ length: LIVE_STREAM_LIMITS.enterprise }, () => abandoned(ingress.url, '/api/v1/analytics/stream', { authorization: `Bearer ${ws.key}` }, left)),
  ];
  await eventually(async () => hub.active, 10_000, 5);
  leave();
  const outcomes = await Promise.all(tries);
  // The premise: streams were left while being opened (any that opened first is left as an open stream is).
  const unanswered = outcomes.filter((o) => o.answered === undefined).length;
  expect(unanswered, `left before any answer: ${unanswered} of ${outcomes.length}`).toBeGreaterThan(0);

  // The hub holds none of them (hub.streams is what the gauge linkmail_live_streams reports), once it has started.
  await eventually(async () => hub.streams === 0, 20_000, 50);

  // Every place and every slot is free: the workspace opens its full allowance of each again, at once.
  const pages = await openAll(PAGE_STREAMS_PER_WORKSPACE, () => openStream(ingress.url, `/analytics/${share}/stream`, undefined));
  expect(pages.map((s) => s.status)).toEqual(Array(PAGE_STREAMS_PER_WORKSPACE).fill(200));
  const apis = await openAll(LIVE_STREAM_LIMITS.enterprise, () => openStream(ingress.url, '/api/v1/analytics/stream', ws.key));
  expect(apis.map((s) => s.status)).toEqual(Array(LIVE_STREAM_LIMITS.enterprise).fill(200));
  expect(hub.streams).toBe(PAGE_STREAMS_PER_WORKSPACE + LIVE_STREAM_LIMITS.enterprise);
  for (const s of [...pages, ...apis]) s.close();
  await eventually(async () => hub.streams === 0, 10_000, 50);
}, 60_000);

it('an ingress stopping while streams are being opened ends or refuses each of them, and closes with none left open', async () => {
  const other = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' });
  try {
    const ws = await workspaceWithKey(other.url);
    const api = client(other.url, ws.key);
    const link = await createdLink(api, { destination: 'https://example.com/stopping' });
    const share = (await api.post(`/api/v1/links/${link.id}/analytics/shares`, {})).body.id as string;
    const opening: Promise<SseStream>[] = [
      ...Array.from({ length: 10 }, () => openStream(other.url, `/analytics/${share}/stream`, undefined)),
      ...Array.from({ length: 10 }, () => openStream(other.url, '/api/v1/analytics/stream', ws.key)),
    ];
    await eventually(async () => other.app.liveScans.active, 10_000, 5);
    const closing = other.close();
    // Each one opened and then ended (shutdown), or was refused (503), or, not yet read when the server
    // stopped listening, had its connection closed unanswered (the client reconnects elsewhere).
    const settled = await Promise.allSettled(opening);
    const answered = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    for (const r of settled) if (r.status === 'rejected') expect(String(r.reason)).toMatch(/ECONNRESET|socket hang up/);
    expect(answered.length).toBeGreaterThan(0);
    for (const s of answered) {
      if (s.status !== 200) {
        expect(s.status).toBe(503);
        continue;
      }
      streams.push(s);
      await s.ended;
      expect(s.events.at(-1)).toMatchObject({ event: 'end', data: JSON.stringify({ reason: 'shutdown' }) });
    }
    await closing;
    expect(other.app.liveScans.streams).toBe(0);
  } finally {
    await other.close().catch(() => {});
  }
}, 60_000);
