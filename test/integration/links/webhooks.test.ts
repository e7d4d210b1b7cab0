// Signed scan.created webhooks through the real stack: real redirects, the
// scans topic, the webhook worker as its own process (killed with SIGKILL in
// one test), and real HTTPS receivers on loopback with a test CA.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScanEvent } from '../../../src/links/scans/scan-event.ts';
import { scansTopic } from '../../../topics/scans.ts';
import { readTopic } from '../../support/topic-reader.ts';
import { verifyWebhook } from '../../../examples/verify-webhook-signature.mjs';
import { DeliveryQueue } from '../../../src/links/webhooks/delivery-queue.ts';
import { signatureHeader } from '../../../src/links/webhooks/webhook-signature.ts';
import { client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { eventually } from '../../support/env.ts';
import { startTs, stopChild, waitForOutput, type Child } from '../../support/processes.ts';
import { scan } from '../../support/links/scans.ts';
import { makeTestCa, type TestCa } from '../../support/links/test-ca.ts';
import { Receivers, type Answer } from '../../support/links/webhook-receiver.ts';

const BASE_MS = 400;
const FACTOR = 2;
let ca: TestCa;
let ingress: TestIngress;
let worker: Child;
const receivers = new Receivers(() => ca);

function startWorker(env: Record<string, string> = {}): Child {
  return startTs('workers/run.ts', ['links-webhooks'], {
    LOG_LEVEL: 'info',
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    WEBHOOK_CA_FILE: ca.caFile,
    WEBHOOK_RETRY_BASE_MS: String(BASE_MS),
    WEBHOOK_RETRY_FACTOR: String(FACTOR),
    WEBHOOK_TIMEOUT_MS: '20000',
    WEBHOOK_POLL_MS: '50',
    WEBHOOK_WORKSPACE_CONCURRENCY: '6',
    ...env,
  });
}

beforeAll(async () => {
  ca = makeTestCa();
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000', WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
  worker = startWorker();
  await waitForOutput(worker, 'worker process ready');
}, 60_000);

afterAll(async () => {
  await stopChild(worker);
  await receivers.closeAll();
  await ingress?.close();
}, 30_000);

const receiver = (answer?: Answer) => receivers.start(answer);

/** A workspace with one endpoint at `url` and one link. */
async function setup(url: string) {
  const ws = await workspaceWithKey(ingress.url);
  const api = client(ingress.url, ws.key);
  const endpoint = await api.post('/api/v1/webhooks', { url, description: 'test receiver' });
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
  const link = await api.post('/api/v1/links', { destination: 'https://example.com/landing' });
  await eventually(async () => ingress.app.redirects.cache.get(link.body.shortId) !== undefined, 5000, 20);
  return { api, workspaceId: ws.workspaceId, endpoint: endpoint.body, shortId: link.body.shortId as string };
}

async function scanOnce(shortId: string): Promise<string> {
  const res = await scan(ingress.url, shortId);
  expect(res.status).toBe(302);
  return res.clickId!;
}

async function deliveries(api: ReturnType<typeof client>, endpointId: string) {
  const res = await api.get(`/api/v1/webhooks/${endpointId}/deliveries`);
  expect(res.status).toBe(200);
  return res.body.data as any[];
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('webhook endpoints', () => {
  it('registers HTTPS endpoints only, shows the secret once, rotates it, and deletes', async () => {
    const ws = await workspaceWithKey(ingress.url);
    const api = client(ingress.url, ws.key);
    expect((await api.post('/api/v1/webhooks', { url: 'http://hooks.example.com/x' })).body.error.code).toBe('webhook_url_not_https');
    expect((await api.post('/api/v1/webhooks', { url: 'https://10.1.2.3/x' })).body.error.code).toBe('webhook_url_private');
    expect((await api.post('/api/v1/webhooks', { url: 'https://localhost/x' })).body.error.code).toBe('webhook_url_private');
    expect((await api.post('/api/v1/webhooks', { url: 'hooks.example.com/x' })).body.error.code).toBe('invalid_url');
    expect((await api.post('/api/v1/webhooks', { url: 'https://hooks.example.com/a b' })).body.error.code).toBe('validation_failed');
    expect((await api.post('/api/v1/webhooks', { url: 'https://hooks.example.com/x', extra: 1 })).body.error.code).toBe('unknown_field');

    const created = await api.post('/api/v1/webhooks', { url: 'https://hooks.example.com/x' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: 'webhook_endpoint', url: 'https://hooks.example.com/x', events: ['scan.created'], previousSecretExpiresAt: null });
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
    const got = await api.get(`/api/v1/webhooks/${created.body.id}`);
    expect(got.body.secret).toBeUndefined();
    expect(got.body.secretHint).toBe(`${created.body.secret.slice(0, 10)}…`);
    expect((await api.get('/api/v1/webhooks')).body.data.map((e: any) => e.id)).toEqual([created.body.id]);

    const rotated = await api.post(`/api/v1/webhooks/${created.body.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(created.body.secret);
    expect(Date.parse(rotated.body.previousSecretExpiresAt)).toBeGreaterThan(Date.now());

    // Another workspace sees nothing of it.
    const stranger = client(ingress.url, (await workspaceWithKey(ingress.url)).key);
    expect((await stranger.get(`/api/v1/webhooks/${created.body.id}`)).status).toBe(404);
    expect((await stranger.delete(`/api/v1/webhooks/${created.body.id}`)).status).toBe(404);
    for (const [method, path] of [
      ['GET', `/api/v1/webhooks/${created.body.id}/deliveries`],
      ['GET', `/api/v1/webhooks/${created.body.id}/deliveries/00000000-0000-4000-8000-000000000000`],
      ['POST', `/api/v1/webhooks/${created.body.id}/deliveries/00000000-0000-4000-8000-000000000000/redeliver`],
      ['POST', `/api/v1/webhooks/${created.body.id}/rotate-secret`],
    ] as const) expect((await (method === 'GET' ? stranger.get(path) : stranger.post(path))).status, path).toBe(404);
    expect((await api.get(`/api/v1/webhooks/${created.body.id}`)).body.secretHint).toBe(`${rotated.body.secret.slice(0, 10)}…`);

    for (let i = 1; i < 10; i++) expect((await api.post('/api/v1/webhooks', { url: `https://hooks.example.com/${i}` })).status).toBe(201);
    const over = await api.post('/api/v1/webhooks', { url: 'https://hooks.example.com/11' });
    expect([over.status, over.body.error.code]).toEqual([409, 'webhook_limit_reached']);

    expect((await api.delete(`/api/v1/webhooks/${created.body.id}`)).status).toBe(204);
    expect((await api.get(`/api/v1/webhooks/${created.body.id}`)).status).toBe(404);
  });
});

describe('scan.created delivery', () => {
  it('signs each request so the documented snippet verifies it, and a changed body or old timestamp fails', async () => {
    const r = await receiver(() => 200);
    const { api, endpoint, shortId, workspaceId } = await setup(r.url);
    const clickId = await scanOnce(shortId);
    await eventually(async () => r.received.length >= 1, 30_000);
    const request = r.received[0]!;
    const signature = String(request.headers['x-service-signature']);
    expect(verifyWebhook(request.body, signature, endpoint.secret)).toBe(true);
    expect(verifyWebhook(request.body.replace('scan.created', 'scan.createe'), signature, endpoint.secret)).toBe(false);
    expect(verifyWebhook(request.body, signature, 'whsec_wrong')).toBe(false);
    // A correctly signed request from an hour ago is a replay.
    const t = Number(/t=(\d+)/.exec(signature)![1]);
    expect(verifyWebhook(request.body, signatureHeader(request.body, [endpoint.secret], t - 3600), endpoint.secret)).toBe(false);

    const payload = JSON.parse(request.body);
    expect(payload).toMatchObject({ type: 'scan.created', data: { clickId, workspaceId, shortId, destination: 'https://example.com/landing', variant: null, trigger: 'link', isBot: false } });
    expect(payload.scanId).toBe(payload.data.scanId);
    expect(request.headers['x-service-event']).toBe('scan.created');
  });

  it('2xx: one attempt, acknowledged, never sent again', async () => {
    const r = await receiver(() => 204);
    const { api, endpoint, shortId } = await setup(r.url);
    await scanOnce(shortId);
    await eventually(async () => (await deliveries(api, endpoint.id))[0]?.state === 'acknowledged', 30_000);
    await settle(BASE_MS * 4); // longer than a retry would wait
    expect(r.received).toHaveLength(1);
    const [d] = await deliveries(api, endpoint.id);
    expect(d).toMatchObject({ state: 'acknowledged', attempts: 1, lastStatusCode: 204, nextAttemptAt: null });
  });

  it('delivers a scan whose message key names the workspace in upper case', async () => {
    // Another producer of `scans` may write the key (the workspace UUID) in upper case; the worker
    // picks scans by key, so it must not take that for a workspace without endpoints.
    const r = await receiver(() => 204);
    const { api, workspaceId, endpoint, shortId } = await setup(r.url);
    await scanOnce(shortId);
    const [stored] = (await readTopic<ScanEvent>(ingress.platform.config, 'scans', (m) => m.some((x) => x.value.workspaceId === workspaceId))).filter((m) => m.value.workspaceId === workspaceId);
    const scanId = randomUUID();
    await ingress.platform.publisher.publish(scansTopic, [{ key: workspaceId.toUpperCase(), value: { ...stored!.value, scanId } }]);
    await eventually(async () => (await deliveries(api, endpoint.id)).filter((d) => d.state === 'acknowledged').length === 2, 30_000);
    expect(r.received.map((x) => JSON.parse(x.body).data.scanId)).toContain(scanId);
  });

  it('4xx: one attempt, permanently rejected, never retried', async () => {
    const r = await receiver(() => 410);
    const { api, endpoint, shortId } = await setup(r.url);
    await scanOnce(shortId);
    await eventually(async () => (await deliveries(api, endpoint.id))[0]?.state === 'permanently_rejected', 30_000);
    await settle(BASE_MS * 4);
    expect(r.received).toHaveLength(1);
    const detail = await api.get(`/api/v1/webhooks/${endpoint.id}/deliveries/${(await deliveries(api, endpoint.id))[0].id}`);
    expect(detail.body).toMatchObject({ state: 'permanently_rejected', attempts: 1, lastStatusCode: 410 });
    expect(detail.body.attemptLog).toEqual([expect.objectContaining({ attempt: 1, statusCode: 410, outcome: 'rejected' })]);
  });

  it('5xx then 2xx: retried with growing gaps, stopping at success', async () => {
    const r = await receiver((n) => (n <= 2 ? 503 : 200));
    const { api, endpoint, shortId } = await setup(r.url);
    await scanOnce(shortId);
    await eventually(async () => (await deliveries(api, endpoint.id))[0]?.state === 'acknowledged', 30_000);
    await settle(BASE_MS * 4);
    expect(r.received).toHaveLength(3);
    const [gap1, gap2] = [r.received[1]!.at - r.received[0]!.at, r.received[2]!.at - r.received[1]!.at];
    // Never earlier than the schedule (BASE, then BASE × FACTOR), and the second gap longer than the first.
    expect(gap1).toBeGreaterThanOrEqual(BASE_MS - 20);
    expect(gap2).toBeGreaterThanOrEqual(BASE_MS * FACTOR - 20);
    expect(gap2).toBeGreaterThan(gap1);
    expect(new Set(r.received.map((q) => JSON.parse(q.body).scanId)).size).toBe(1);
    const detail = await api.get(`/api/v1/webhooks/${endpoint.id}/deliveries/${(await deliveries(api, endpoint.id))[0].id}`);
    expect(detail.body.attemptLog.map((a: any) => [a.statusCode, a.outcome])).toEqual([[503, 'failed'], [503, 'failed'], [200, 'acknowledged']]);
  });

  it('always failing: exactly 5 attempts, then stopped; a manual redelivery sends the same event again', async () => {
    const r = await receiver(() => 500);
    const { api, endpoint, shortId } = await setup(r.url);
    await scanOnce(shortId);
    await eventually(async () => (await deliveries(api, endpoint.id))[0]?.state === 'stopped', 30_000);
    await settle(BASE_MS * 8);
    expect(r.received).toHaveLength(5);
    const [stopped] = await deliveries(api, endpoint.id);
    expect(stopped).toMatchObject({ attempts: 5, lastStatusCode: 500, nextAttemptAt: null });
    const gaps = r.received.slice(1).map((q, i) => q.at - r.received[i]!.at);
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(BASE_MS * FACTOR ** i - 20));

    r.answer = () => 200;
    const again = await api.post(`/api/v1/webhooks/${endpoint.id}/deliveries/${stopped.id}/redeliver`);
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ state: 'queued', redeliveryOf: stopped.id, scanId: stopped.scanId });
    await eventually(async () => (await api.get(`/api/v1/webhooks/${endpoint.id}/deliveries/${again.body.id}`)).body.state === 'acknowledged', 30_000);
    expect(r.received).toHaveLength(6);
    expect(r.received[5]!.body).toBe(r.received[0]!.body);
    expect((await api.get(`/api/v1/webhooks/${endpoint.id}/deliveries?state=stopped`)).body.data.map((d: any) => d.id)).toEqual([stopped.id]);
    expect((await api.post(`/api/v1/webhooks/${endpoint.id}/deliveries/00000000-0000-4000-8000-000000000000/redeliver`)).status).toBe(404);

    // The log keeps finished deliveries WEBHOOK_LOG_RETENTION_DAYS; the purge leaves the redelivery, which still names its original.
    await ingress.platform.pg.query(`UPDATE webhook_deliveries SET updated_at = now() - interval '31 days' WHERE id = $1`, [stopped.id]);
    const queue = new DeliveryQueue(ingress.platform.pg, { baseMs: BASE_MS, factor: FACTOR }, ingress.platform.secrets);
    expect(await queue.purgeFinished(30)).toBeGreaterThanOrEqual(1);
    const left = await deliveries(api, endpoint.id);
    expect(left.map((d) => [d.id, d.redeliveryOf])).toEqual([[again.body.id, stopped.id]]);
    expect((await api.get(`/api/v1/webhooks/${endpoint.id}/deliveries/${stopped.id}`)).status).toBe(404);
  }, 60_000);

  it('a receiver that hangs does not slow redirects or another workspace\'s deliveries', async () => {
    const hanging = await receiver(() => 'hang');
    const healthy = await receiver(() => 200);
    const slow = await setup(hanging.url);
    const fine = await setup(healthy.url);
    for (let i = 0; i < 6; i++) await scanOnce(slow.shortId);
    await eventually(async () => hanging.open() >= 4, 30_000);
    // While the hanging endpoint holds its attempts open, the other workspace is served in full.
    const started = Date.now();
    for (let i = 0; i < 5; i++) await scanOnce(fine.shortId);
    const redirectsMs = Date.now() - started;
    await eventually(async () => (await deliveries(fine.api, fine.endpoint.id)).filter((d) => d.state === 'acknowledged').length === 5, 30_000);
    expect(healthy.received).toHaveLength(5);
    expect(hanging.open()).toBeGreaterThanOrEqual(4); // still hanging: nothing above waited for it
    // At most WEBHOOK_ENDPOINT_CONCURRENCY (4) attempts of one endpoint are in flight; the rest wait their turn.
    expect(hanging.received).toHaveLength(4);
    console.log(`5 redirects while an endpoint hung: ${redirectsMs} ms`);
    hanging.answer = () => 200;
    hanging.release(200);
    await eventually(async () => (await deliveries(slow.api, slow.endpoint.id)).filter((d) => d.state === 'acknowledged').length === 6, 30_000);
  }, 60_000);
});

describe('slots per workspace', () => {
  it('holds a workspace with many hanging endpoints to WEBHOOK_WORKSPACE_CONCURRENCY attempts, and serves the others', async () => {
    const hanging = await receiver(() => 'hang');
    const healthy = await receiver(() => 200);
    const slow = await setup(`${hanging.url}?endpoint=1`);
    for (const n of [2, 3]) expect((await slow.api.post('/api/v1/webhooks', { url: `${hanging.url}?endpoint=${n}` })).status).toBe(201);
    const fine = await setup(healthy.url);
    // 3 scans × 3 endpoints: 9 deliveries, 3 per endpoint (under its cap of 4), but the workspace may hold only 6.
    for (let i = 0; i < 3; i++) await scanOnce(slow.shortId);
    await eventually(async () => hanging.open() >= 6, 30_000);
    for (let i = 0; i < 3; i++) await scanOnce(fine.shortId);
    await eventually(async () => (await deliveries(fine.api, fine.endpoint.id)).filter((d) => d.state === 'acknowledged').length === 3, 30_000);
    expect(hanging.open()).toBe(6);
    expect(hanging.received).toHaveLength(6);
    hanging.answer = () => 200;
    hanging.release(200);
    await eventually(async () => hanging.received.length === 9, 30_000);
  }, 60_000);
});

describe('the webhook worker killed with SIGKILL', () => {
  it('resumes the retry schedule after a restart: no event lost, every repeat with the same scanId', async () => {
    // This test's worker waits longer between attempts, so the kill lands between attempts 2 and 3.
    worker.process.kill('SIGTERM');
    await worker.exited;
    const slowRetries = { WEBHOOK_RETRY_BASE_MS: '1500', WEBHOOK_RETRY_FACTOR: '2' };
    worker = startWorker(slowRetries);
    await waitForOutput(worker, 'worker process ready');

    const r = await receiver((n) => (n <= 6 ? 503 : 200)); // three scans: the first two attempts of each fail
    const { api, endpoint, shortId } = await setup(r.url);
    for (let i = 0; i < 3; i++) await scanOnce(shortId);
    await eventually(async () => {
      const ds = await deliveries(api, endpoint.id);
      return ds.length === 3 && ds.every((d) => d.state === 'retried' && d.attempts === 2);
    }, 30_000, 50);
    worker.process.kill('SIGKILL');
    expect((await worker.exited).signal).toBe('SIGKILL');
    const killedAt = Date.now();
    const secondAttempts = new Map<string, number>();
    for (const q of r.received) secondAttempts.set(JSON.parse(q.body).scanId, q.at);
    // Scans while no worker runs wait in the topic.
    const whileDown = [await scanOnce(shortId), await scanOnce(shortId)];

    worker = startWorker(slowRetries);
    // The dispatcher resumes at once; the consumer first waits out the killed member's session (ACTOR_SESSION_TIMEOUT_MS) in the group join.
    await waitForOutput(worker, 'webhook dispatcher started');
    await eventually(async () => {
      const ds = await deliveries(api, endpoint.id);
      return ds.length === 5 && ds.every((d) => d.state === 'acknowledged');
    }, 60_000);
    const byScan = new Map<string, number[]>();
    for (const q of r.received) {
      const { scanId } = JSON.parse(q.body);
      byScan.set(scanId, [...(byScan.get(scanId) ?? []), q.at]);
    }
    expect(byScan.size).toBe(5);
    for (const [scanId, times] of byScan) {
      if (!secondAttempts.has(scanId)) {
        expect(times).toHaveLength(1); // queued after the restart, acknowledged at once
        continue;
      }
      expect(times).toHaveLength(3);
      // The third attempt kept its place in the schedule: not before 2 × 1500 ms after the second.
      expect(times[2]! - secondAttempts.get(scanId)!).toBeGreaterThanOrEqual(3000 - 20);
      expect(times[2]!).toBeGreaterThan(killedAt);
    }
    const final = await deliveries(api, endpoint.id);
    expect(final.filter((d) => d.attempts === 3)).toHaveLength(3);
    expect(final.filter((d) => d.attempts === 1)).toHaveLength(2);
    expect(whileDown.every((cid) => cid.length === 84)).toBe(true);
  }, 120_000);

  it('counts an attempt cut off by SIGKILL as interrupted once its lease runs out, and retries it after a restart', async () => {
    const quick = { WEBHOOK_RETRY_BASE_MS: '1000', WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_LEASE_MARGIN_MS: '500' };
    worker.process.kill('SIGTERM');
    await worker.exited;
    worker = startWorker(quick);
    await waitForOutput(worker, 'worker process ready');

    const r = await receiver((n) => (n === 1 ? 'hang' : 200));
    const { api, endpoint, shortId } = await setup(r.url);
    await scanOnce(shortId);
    await eventually(async () => r.open() === 1, 30_000, 50);
    worker.process.kill('SIGKILL'); // mid-attempt: the request is out, no answer recorded
    await worker.exited;
    worker = startWorker(quick);
    await waitForOutput(worker, 'webhook dispatcher started');

    await eventually(async () => (await deliveries(api, endpoint.id))[0]?.state === 'acknowledged', 30_000);
    const [d] = await deliveries(api, endpoint.id);
    const detail = (await api.get(`/api/v1/webhooks/${endpoint.id}/deliveries/${d.id}`)).body;
    expect(detail.attemptLog.map((a: any) => [a.attempt, a.outcome, a.statusCode])).toEqual([[1, 'interrupted', null], [2, 'acknowledged', 200]]);
    expect(r.received).toHaveLength(2);
    expect(new Set(r.received.map((q) => JSON.parse(q.body).scanId)).size).toBe(1);
  }, 120_000);
});
