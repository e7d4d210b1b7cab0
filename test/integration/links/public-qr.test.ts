// The public QR URL (issue 33, item 7): GET /:shortId/qr on the short-link
// host, without a key, through the real ingress and render pool; the images are
// read back by a real decoder.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type TestIngress } from '../../support/ingress.ts';
import { ingressWithWorkspace, type ApiClient } from '../../support/links/ingress-with-workspace.ts';
import { decodeQr, pngSize, svgToPng } from '../../support/links/decode.ts';
import { scan } from '../../support/links/scans.ts';

let ingress: TestIngress;
let api: ApiClient;
let ipSeq = 0;

beforeAll(async () => ({ ingress, api } = await ingressWithWorkspace()), 180_000);

afterAll(async () => {
  await ingress?.close();
});

/** A public GET from its own client IP (the limit is per IP), unless one is given. */
async function get(path: string, headers: Record<string, string> = {}, ip = `198.51.100.${++ipSeq}`) {
  const res = await fetch(`${ingress.url}${path}`, { headers: { 'x-forwarded-for': ip, ...headers }, redirect: 'manual' });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

async function link(body: object = {}) {
  const res = await api.post('/api/v1/links', { destination: 'https://example.com/public-qr', ...body });
  expect(res.status).toBe(201);
  return res.body as { id: string; shortId: string; shortUrl: string };
}

describe('GET /:shortId/qr', () => {
  it('renders PNG (default) and SVG of the requested size that scan to the short URL, without a key', async () => {
    const { shortId, shortUrl } = await link();
    const png = await get(`/${shortId}/qr`);
    expect(png.status).toBe(200);
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(pngSize(png.bytes)).toEqual({ width: 512, height: 512 });
    expect(decodeQr(png.bytes)).toBe(`${shortUrl}?qr`);
    for (const size of [100, 300, 1024]) {
      const sized = await get(`/${shortId}/qr?size=${size}&format=png`);
      expect(pngSize(sized.bytes)).toEqual({ width: size, height: size });
      expect(decodeQr(sized.bytes)).toBe(`${shortUrl}?qr`);
    }
    const svg = await get(`/${shortId}/qr?format=svg&size=200`);
    expect([svg.status, svg.headers.get('content-type')]).toEqual([200, 'image/svg+xml']);
    expect(decodeQr(svgToPng(svg.bytes))).toBe(`${shortUrl}?qr`);
  });

  it('is cached: public max-age and an ETag that answers 304, the same bytes from the in-process cache', async () => {
    const { shortId } = await link();
    const first = await get(`/${shortId}/qr?size=256`);
    expect(first.headers.get('cache-control')).toBe('public, max-age=300');
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    const again = await get(`/${shortId}/qr?size=256`);
    expect(again.bytes.equals(first.bytes)).toBe(true);
    const notModified = await get(`/${shortId}/qr?size=256`, { 'if-none-match': etag });
    expect([notModified.status, notModified.bytes.length]).toEqual([304, 0]);
    // Another size or format is another image.
    expect((await get(`/${shortId}/qr?size=257`)).headers.get('etag')).not.toBe(etag);
  });

  it('answers 404 for unknown and deactivated links, and 400 validation_failed for a bad size or format', async () => {
    expect((await get('/no-such-link-xyz/qr')).status).toBe(404);
    const { id, shortId } = await link();
    expect((await get(`/${shortId}/qr`)).status).toBe(200);
    expect((await api.delete(`/api/v1/links/${id}`)).status).toBe(200);
    const gone = await get(`/${shortId}/qr`);
    expect(gone.status).toBe(404);
    expect(JSON.parse(gone.bytes.toString()).error.code).toBe('not_found');
    const live = await link();
    for (const query of ['size=99', 'size=1025', 'size=abc', 'size=1.5', 'format=gif', 'format=', 'size=200&size=300']) {
      const res = await get(`/${live.shortId}/qr?${query}`);
      expect([res.status, JSON.parse(res.bytes.toString()).error.code], query).toEqual([400, 'validation_failed']);
    }
  });

  it('is not a scan and leaves the redirect of /:shortId as it was', async () => {
    const { shortId } = await link();
    expect((await get(`/${shortId}/qr`)).status).toBe(200);
    const res = await scan(ingress.url, shortId);
    expect(res.status).toBe(302);
    expect(res.location).toMatch(/^https:\/\/example\.com\/public-qr\?svc_cid=/);
  });

  it('limits each client IP to 60 images a minute (429 qr_rate_limited with Retry-After), other IPs unaffected', async () => {
    const { shortId } = await link();
    const ip = '203.0.113.77';
    const answers = [];
    for (let i = 0; i < 61; i++) answers.push(await get(`/${shortId}/qr?size=100`, {}, ip));
    expect(answers.slice(0, 60).every((a) => a.status === 200)).toBe(true);
    expect(answers[0]!.headers.get('x-ratelimit-limit')).toBe('60');
    const over = answers[60]!;
    expect(over.status).toBe(429);
    expect(JSON.parse(over.bytes.toString()).error.code).toBe('qr_rate_limited');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await get(`/${shortId}/qr?size=100`, {}, '203.0.113.78')).status).toBe(200);
  });
});
