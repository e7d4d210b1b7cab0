// An ingress killed (SIGKILL) under an open live stream: the client resumes from its
// Last-Event-ID on another ingress, one that ran all along and one started after the kill,
// and receives every scan once: none lost, none repeated.
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { INGRESS_ENV, client, freshIp, startIngress, type TestIngress } from '../../support/ingress.ts';
import { childPort, startTs, stopChild, waitForOutput, type Child } from '../../support/processes.ts';
import { testConfig } from '../../support/env.ts';
import { openStream, type SseStream } from '../../support/links/sse-client.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';

const journalRoot = `${testConfig().SCAN_JOURNAL_DIR}-live-failover-${process.pid}`;
const env = { ...INGRESS_ENV, LOG_LEVEL: 'info', REDIRECTS_PER_MINUTE_PER_IP: '1000000', API_RATE_LIMIT_PER_MINUTE: '100000', LIVE_STREAM_HEARTBEAT_MS: '300' };

let doomed: Child;
let survivor: Child;
let late: TestIngress | undefined;
const urls = { doomed: '', survivor: '' };
const streams: SseStream[] = [];

async function startChild(name: string): Promise<{ child: Child; url: string }> {
  const port = childPort();
  const child = startTs('src/main.ts', [], { ...env, HTTP_PORT: port, SCAN_JOURNAL_DIR: `${journalRoot}-${name}` });
  await waitForOutput(child, 'ingress listening', 90_000);
  return { child, url: `http://127.0.0.1:${port}` };
}

beforeAll(async () => {
  const [a, b] = await Promise.all([startChild('a'), startChild('b')]);
  ({ child: doomed, url: urls.doomed } = a);
  ({ child: survivor, url: urls.survivor } = b);
}, 120_000);
afterAll(async () => {
  for (const s of streams) s.close();
  await late?.close();
  await stopChild(doomed, 'SIGKILL');
  await stopChild(survivor);
  for (const name of ['a', 'b', 'late']) await rm(`${journalRoot}-${name}`, { recursive: true, force: true });
});

it('a stream cut by SIGKILL resumes from its Last-Event-ID on another ingress without losing or repeating a scan', async () => {
  const { key } = await workspaceWithKey(urls.survivor);
  const link = (await client(urls.survivor, key).post('/api/v1/links', { destination: 'https://example.com/failover' })).body;
  const first = await openStream(urls.doomed, '/api/v1/analytics/stream', key);
  streams.push(first);
  expect(first.status).toBe(200);

  // Redirects through the survivor, before, during and after the kill: each one's click ID names its scan.
  const made: string[] = [];
  const redirect = async () => {
    const res = await fetch(`${urls.survivor}/${link.shortId}`, { redirect: 'manual', headers: { 'x-forwarded-for': freshIp(), 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0' } });
    expect(res.status).toBe(302);
    made.push(/[?&]svc_cid=([^#&]+)/.exec(res.headers.get('location')!)![1]!);
  };
  for (let i = 0; i < 20; i++) await redirect();
  await first.until((e) => e.filter((x) => x.event === 'scan').length >= 10, 15_000, 'scans before the kill');
  const during = (async () => {
    for (let i = 0; i < 60; i++) {
      await redirect();
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  await new Promise((r) => setTimeout(r, 400));
  doomed.process.kill('SIGKILL');
  await doomed.exited;
  await first.ended;
  await during;
  const seen = first.scans().map((s) => s.clickId);
  const resumeFrom = first.lastEventId();
  expect(seen.length).toBeGreaterThan(0);
  expect(seen.length).toBeLessThan(made.length);
  for (let i = 0; i < 20; i++) await redirect();

  // On the ingress that ran all along…
  const resumed = await openStream(urls.survivor, '/api/v1/analytics/stream', key, { 'last-event-id': resumeFrom });
  streams.push(resumed);
  expect(resumed.status).toBe(200);
  const complete = (s: SseStream) => s.until((e) => seen.length + e.filter((x) => x.event === 'scan').length >= made.length, 20_000, `the ${made.length - seen.length} scans after the cut`);
  await complete(resumed);
  // …and on one started after the kill, which read the last minutes of scans from Kafka at start.
  late = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000', SCAN_JOURNAL_DIR: `${journalRoot}-late` });
  const fromLate = await openStream(late.url, '/api/v1/analytics/stream', key, { 'last-event-id': resumeFrom });
  streams.push(fromLate);
  await complete(fromLate);
  await new Promise((r) => setTimeout(r, 1000));
  for (const s of [resumed, fromLate]) {
    const all = [...seen, ...s.scans().map((x) => x.clickId)];
    expect(all.length).toBe(made.length);
    expect(new Set(all)).toEqual(new Set(made));
    expect(s.events.some((e) => e.event === 'resync')).toBe(false);
  }
}, 120_000);
