// QR codes and barcodes over real HTTP, rendered in the worker pool, and read
// back by real decoders: every image must scan to exactly what it should hold.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { decodeBarcode, decodeQr, decodeWithZbar, pngSize, svgToPng } from '../../support/links/decode.ts';

let ingress: TestIngress;
let api: ReturnType<typeof client>;
let key: string;
let shortId: string;
let shortUrl: string;

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' });
  ({ key } = await workspaceWithKey(ingress.url));
  api = client(ingress.url, key);
  const { body } = await api.post('/api/v1/links', { destination: 'https://example.com/menu', shortId: `qr-${Date.now()}` });
  shortId = body.shortId;
  shortUrl = body.shortUrl;
});
afterAll(async () => {
  await ingress?.close();
});

async function image(path: string, body: unknown) {
  const res = await fetch(`${ingress.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-forwarded-for': '2001:db8::9' }, body: JSON.stringify(body) });
  return { status: res.status, type: res.headers.get('content-type') ?? '', headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

describe('POST /api/v1/qr', () => {
  it.each([100, 512, 1024])('renders a %i px PNG that scans to the short URL', async (size) => {
    const res = await image('/api/v1/qr', { shortId, format: 'png', size });
    expect(res.status).toBe(200);
    expect(res.type).toBe('image/png');
    expect(pngSize(res.bytes)).toEqual({ width: size, height: size });
    expect(decodeQr(res.bytes)).toBe(`${shortUrl}?qr`);
  });

  it('renders SVG, plain and styled (colours, error correction H), that scans to the short URL', async () => {
    for (const body of [
      { shortId, format: 'svg' },
      { shortId, format: 'svg', errorCorrection: 'L', margin: 1 },
      { shortId, format: 'svg', style: { fgColor: '#1a237e', bgColor: '#fff8e1' } },
    ]) {
      const res = await image('/api/v1/qr', body);
      expect(res.status).toBe(200);
      expect(res.type).toBe('image/svg+xml');
      expect(decodeQr(svgToPng(res.bytes))).toBe(`${shortUrl}?qr`);
    }
    const styled = await image('/api/v1/qr', { shortId, format: 'svg', style: { fgColor: '#1a237e' } });
    expect(styled.bytes.toString()).toContain('#1a237e');
  });

  it('renders styled codes through the API that scan, and refuses faint colours', async () => {
    for (const style of [
      { moduleShape: 'dots', eyeFrameShape: 'circle', eyeBallShape: 'circle', qrShape: 'circle', ringText: 'SCAN FOR THE MENU', ringColor: '#1a237e' },
      { moduleShape: 'rounded', eyeFrameShape: 'rounded', eyeBallShape: 'rounded', gradient: { type: 'radial', from: '#004d40', to: '#1a237e' }, eyeColor: '#c62828' },
      { mask: 'heart', moduleShape: 'dots', fgColor: '#b71c1c' },
    ]) {
      const res = await image('/api/v1/qr', { shortId, format: 'svg', size: 600, style });
      expect(res.status).toBe(200);
      expect(await decodeBarcode(svgToPng(res.bytes, 600))).toContainEqual({ format: 'QRCode', text: `${shortUrl}?qr` });
    }
    const faint = await api.post('/api/v1/qr', { shortId, format: 'svg', style: { fgColor: '#dddddd' } });
    expect(faint.status).toBe(400);
    expect(faint.body.error.code).toBe('insufficient_contrast');
    const faintGradient = await api.post('/api/v1/qr', { shortId, format: 'svg', style: { gradient: { type: 'linear', from: '#000000', to: '#eeeeee' } } });
    expect(faintGradient.body.error.code).toBe('insufficient_contrast');
    expect((await api.post('/api/v1/qr', { shortId, format: 'svg', style: { ringText: 'x'.repeat(49) } })).status).toBe(400);
  });

  it('sends cache headers and answers 304 to a matching If-None-Match', async () => {
    const first = await image('/api/v1/qr', { shortId, format: 'png', size: 200 });
    expect(first.headers.get('cache-control')).toContain('max-age');
    const etag = first.headers.get('etag')!;
    const again = await fetch(`${ingress.url}/api/v1/qr`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'if-none-match': etag }, body: JSON.stringify({ shortId, format: 'png', size: 200 }) });
    expect(again.status).toBe(304);
  });

  it('refuses bad requests with a clear 4xx', async () => {
    const cases: [unknown, number, string][] = [
      [{ shortId, format: 'png', style: { fgColor: '#000000' } }, 400, 'styled_png_not_supported'],
      [{ shortId, format: 'png', size: 99 }, 400, 'validation_failed'],
      [{ shortId, format: 'png', size: 1025 }, 400, 'validation_failed'],
      [{ shortId, format: 'gif' }, 400, 'validation_failed'],
      [{ shortId, format: 'svg', style: { fgColor: 'blue' } }, 400, 'validation_failed'],
      [{ shortId, format: 'svg', style: { sparkles: true } }, 400, 'unknown_field'],
      [{ shortId: 'no-such-link-anywhere', format: 'png' }, 404, 'not_found'],
      [{ format: 'png' }, 400, 'validation_failed'],
    ];
    for (const [body, status, code] of cases) {
      const res = await api.post('/api/v1/qr', body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.error.code).toBe(code);
    }
  });

  it("answers 404 for another workspace's link", async () => {
    const other = client(ingress.url, (await workspaceWithKey(ingress.url)).key);
    expect((await other.post('/api/v1/qr', { shortId, format: 'png' })).status).toBe(404);
  });
});

describe('styled QR codes, looked at', () => {
  // The shapes drawn in the modules' groups (<g fill=…>), the finder eyes being drawn apart.
  const moduleShapes = (svg: string) => [...svg.matchAll(/<g fill="[^"]+">([\s\S]*?)<\/g>/g)].flatMap(([, group]) => [...group!.matchAll(/<(\w+) /g)].map((m) => m[1]));

  it.each([
    ['dots', { moduleShape: 'dots' }, 'circle'],
    ['rounded', { moduleShape: 'rounded' }, 'rect'],
    ['dots on a circle with a ring', { moduleShape: 'dots', qrShape: 'circle', ringText: 'SCAN ME' }, 'circle'],
    ['dots over halftone art', { moduleShape: 'dots', halftone: { image: `data:image/png;base64,${PNG.sync.write(new PNG({ width: 8, height: 8 })).toString('base64')}` } }, 'circle'],
  ])('%s: timing, alignment, format and version modules take the module shape too, and it scans (ZXing, zbar)', async (_what, style, shape) => {
    const res = await image('/api/v1/qr', { shortId, format: 'svg', size: 600, style });
    expect(res.status).toBe(200);
    const svg = res.bytes.toString();
    const shapes = moduleShapes(svg);
    expect(shapes.length).toBeGreaterThan(100);
    expect(new Set(shapes)).toEqual(new Set([shape]));
    // Rounded modules are all rounded: no plain square among them.
    if (style.moduleShape === 'rounded') expect(svg.match(/<g fill="[^"]+">[\s\S]*?<\/g>/)![0]).not.toMatch(/<rect (?![^>]*rx=)/);
    const png = svgToPng(res.bytes, 700);
    expect(await decodeBarcode(png)).toContainEqual({ format: 'QRCode', text: `${shortUrl}?qr` });
    expect(decodeWithZbar([png])[0]).toEqual([`${shortUrl}?qr`]);
  });

  it('a star mask reads as a five-pointed star: modules reach far out along five points, not between them', async () => {
    const res = await image('/api/v1/qr', { shortId, format: 'svg', size: 600, style: { mask: 'star', moduleShape: 'square', fgColor: '#b71c1c' } });
    expect(res.status).toBe(200);
    const svg = res.bytes.toString();
    const side = Number(/viewBox="0 0 ([\d.]+) /.exec(svg)![1]);
    const centre = side / 2;
    const modules = [...svg.matchAll(/<rect x="([\d.-]+)" y="([\d.-]+)" width="1\.02"/g)].map(([, x, y]) => ({ x: Number(x) + 0.5 - centre, y: Number(y) + 0.5 - centre }));
    const reach = Math.max(...modules.map((m) => Math.hypot(m.x, m.y)));
    // How far out the modules go around a direction (degrees, 0 = up, clockwise).
    const farthest = (degrees: number) => Math.max(0, ...modules.filter((m) => {
      const angle = (Math.atan2(m.x, -m.y) * 180) / Math.PI;
      return Math.abs(((angle - degrees + 540) % 360) - 180) <= 4;
    }).map((m) => Math.hypot(m.x, m.y)));
    for (let k = 0; k < 5; k++) {
      expect(farthest(k * 72), `point ${k}`).toBeGreaterThan(reach * 0.85);
      expect(farthest(k * 72 + 36), `between points ${k}`).toBeLessThan(reach * 0.6);
    }
    const png = svgToPng(res.bytes, 700);
    expect(await decodeBarcode(png)).toContainEqual({ format: 'QRCode', text: `${shortUrl}?qr` });
    expect(decodeWithZbar([png])[0]).toEqual([`${shortUrl}?qr`]);
  });
});

describe('halftone art', () => {
  // A colourful picture made here (the network has nothing to fetch from).
  const picture = (() => {
    const img = new PNG({ width: 96, height: 96 });
    for (let y = 0; y < 96; y++) for (let x = 0; x < 96; x++) {
      const i = (y * 96 + x) * 4;
      img.data[i] = x * 2; img.data[i + 1] = y * 2; img.data[i + 2] = (x + y) * 1.3; img.data[i + 3] = 255;
    }
    return PNG.sync.write(img);
  })();
  let server: Server;
  let base: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/img.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(picture);
      if (req.url === '/big') return res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(3 * 1024 * 1024, 1));
      if (req.url === '/text') return res.writeHead(200, { 'content-type': 'image/png' }).end('not an image at all');
      if (req.url === '/moved') return res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
      // /slow never answers.
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('blends a base64 picture into a code that still scans', async () => {
    const res = await image('/api/v1/qr', { shortId, format: 'svg', size: 600, style: { halftone: { image: `data:image/png;base64,${picture.toString('base64')}` } } });
    expect(res.status).toBe(200);
    expect(res.bytes.toString()).toContain('<image');
    expect(await decodeBarcode(svgToPng(res.bytes, 700))).toContainEqual({ format: 'QRCode', text: `${shortUrl}?qr` });
    const notImage = await api.post('/api/v1/qr', { shortId, format: 'svg', style: { halftone: { image: `data:image/png;base64,${Buffer.from('hello').toString('base64')}` } } });
    expect(notImage.body.error.code).toBe('invalid_image');
  });

  it('refuses image URLs on private addresses', async () => {
    for (const url of [`${base}/img.png`, 'http://169.254.169.254/latest', 'http://[::1]/x', 'http://10.0.0.1/x']) {
      const res = await api.post('/api/v1/qr', { shortId, format: 'svg', style: { halftone: { image: url } } });
      expect(res.status, url).toBe(400);
      expect(res.body.error.code).toBe('image_address_refused');
    }
  });

  it('fetches an allowed URL with a timeout, a size cap, no redirects and a type check', async () => {
    const allowed = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000', OUTBOUND_ALLOW_HOSTS: '127.0.0.1', QR_IMAGE_FETCH_TIMEOUT_MS: '500' });
    try {
      const ws = await workspaceWithKey(allowed.url);
      const c = client(allowed.url, ws.key);
      const { body: link } = await c.post('/api/v1/links', { destination: 'https://example.com/art' });
      const ok = await fetch(`${allowed.url}/api/v1/qr`, { method: 'POST', headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ shortId: link.shortId, format: 'svg', size: 600, style: { halftone: { image: `${base}/img.png`, opacity: 0.8 } } }) });
      expect(ok.status).toBe(200);
      expect(await decodeBarcode(svgToPng(Buffer.from(await ok.arrayBuffer()), 700))).toContainEqual({ format: 'QRCode', text: `${link.shortUrl}?qr` });
      const cases: [string, string][] = [['/slow', 'image_fetch_failed'], ['/big', 'image_fetch_failed'], ['/text', 'invalid_image'], ['/moved', 'image_fetch_failed']];
      for (const [path, code] of cases) {
        const started = Date.now();
        const res = await c.post('/api/v1/qr', { shortId: link.shortId, format: 'svg', style: { halftone: { image: `${base}${path}` } } });
        expect(res.status, path).toBe(400);
        expect(res.body.error.code, path).toBe(code);
        expect(Date.now() - started).toBeLessThan(5000);
      }
    } finally {
      await allowed.close();
    }
  });
});

describe('POST /api/v1/barcode', () => {
  const cases: [string, string, string, string][] = [
    ['upc-a', '036000291452', 'EAN13', '0036000291452'],
    ['ean-13', '5901234123457', 'EAN13', '5901234123457'],
    ['ean-8', '96385074', 'EAN8', '96385074'],
    ['itf-14', '10012345678902', 'ITF', '10012345678902'],
    ['gs1-128', '(01)10012345678902(10)ABC', 'Code128', '(01)10012345678902(10)ABC'],
    ['code-128', 'Hello-123', 'Code128', 'Hello-123'],
  ];

  it.each(cases)('renders %s as PNG and SVG that decode back to the data', async (symbology, data, format, decoded) => {
    const png = await image('/api/v1/barcode', { symbology, data, format: 'png' });
    expect(png.status).toBe(200);
    expect(png.type).toBe('image/png');
    expect(await decodeBarcode(png.bytes)).toContainEqual({ format, text: decoded });
    const svg = await image('/api/v1/barcode', { symbology, data, format: 'svg' });
    expect(svg.type).toBe('image/svg+xml');
    expect(await decodeBarcode(svgToPng(svg.bytes, 800))).toContainEqual({ format, text: decoded });
  });

  it('adds a missing check digit', async () => {
    const res = await image('/api/v1/barcode', { symbology: 'ean-13', data: '590123412345' });
    expect(await decodeBarcode(res.bytes)).toContainEqual({ format: 'EAN13', text: '5901234123457' });
  });

  it('refuses a wrong check digit naming the expected one, and data the symbology cannot hold', async () => {
    const wrong = await api.post('/api/v1/barcode', { symbology: 'ean-13', data: '5901234123458' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.code).toBe('invalid_check_digit');
    expect(wrong.body.error.message).toBe('EAN-13: the check digit should be 7, not 8.');
    expect(wrong.body.error.details).toEqual([{ path: '/data', message: 'expected check digit 7' }]);
    const letters = await api.post('/api/v1/barcode', { symbology: 'upc-a', data: '03600029145X' });
    expect(letters.body.error.code).toBe('invalid_barcode_data');
    expect(letters.body.error.message).toContain('digits only');
    const gtin = await api.post('/api/v1/barcode', { symbology: 'gs1-128', data: '(01)10012345678901' });
    expect(gtin.body.error.message).toContain('should be 2');
    expect((await api.post('/api/v1/barcode', { symbology: 'qr', data: '1' })).status).toBe(400);
  });
});

describe('retail barcodes (EAN-13, UPC-A, EAN-8) in the standard layout', () => {
  // The bars (stroked vertical lines) and the glyphs of the digits (filled paths) of a bwip-js SVG.
  function layout(svg: string) {
    const bars: { x: number; width: number; bottom: number }[] = [];
    for (const [, width, d] of svg.matchAll(/<path stroke="#000000" stroke-width="([\d.]+)" d="([^"]+)"/g)) {
      for (const [, x, y1, , y2] of d!.matchAll(/M([\d.]+) ([\d.]+)L([\d.]+) ([\d.]+)/g)) bars.push({ x: Number(x), width: Number(width), bottom: Math.max(Number(y1), Number(y2)) });
    }
    const glyphs = [...svg.matchAll(/<path d="([^"]+)" fill="#000000"/g)].map(([, d]) => {
      const numbers = [...d!.matchAll(/-?[\d.]+/g)].map(Number);
      const xs = numbers.filter((_, i) => i % 2 === 0);
      const ys = numbers.filter((_, i) => i % 2 === 1);
      return { left: Math.min(...xs), right: Math.max(...xs), top: Math.min(...ys) };
    }).sort((a, b) => a.left - b.left);
    return { bars, glyphs };
  }

  // [symbology, data, digits outside the bars on the left, digits left of the centre guard, right of it, outside on the right]
  const cases: [string, string, number, number, number, number][] = [
    ['ean-13', '5901234123457', 1, 6, 6, 0],
    ['upc-a', '036000291452', 1, 5, 5, 1],
    ['ean-8', '96385074', 0, 4, 4, 0],
  ];

  it.each(cases)('%s: guard bars extend below the others, the digits are grouped between them, the leading digit outside', async (symbology, data, outLeft, left, right, outRight) => {
    const res = await image('/api/v1/barcode', { symbology, data, format: 'svg' });
    expect(res.status).toBe(200);
    const svg = res.bytes.toString();
    const { bars, glyphs } = layout(svg);
    const first = Math.min(...bars.map((b) => b.x - b.width / 2));
    const last = Math.max(...bars.map((b) => b.x + b.width / 2));
    const shortest = Math.min(...bars.map((b) => b.bottom));
    const guards = bars.filter((b) => b.bottom > shortest);
    // The start and end guards are long, and so is the centre guard.
    expect(guards.some((b) => b.x - b.width / 2 === first)).toBe(true);
    expect(guards.some((b) => b.x + b.width / 2 === last)).toBe(true);
    const centre = guards.filter((b) => b.x > first + (last - first) * 0.3 && b.x < first + (last - first) * 0.7);
    expect(centre.length).toBe(2);
    const centreLeft = Math.min(...centre.map((b) => b.x - b.width / 2));
    const centreRight = Math.max(...centre.map((b) => b.x + b.width / 2));

    // One glyph per digit, below the bars, none under a long bar.
    expect(glyphs.length).toBe(data.length);
    for (const g of glyphs) {
      expect(g.top).toBeGreaterThanOrEqual(shortest);
      expect(guards.some((b) => g.right > b.x - b.width / 2 && g.left < b.x + b.width / 2), JSON.stringify(g)).toBe(false);
    }
    const count = (where: (g: (typeof glyphs)[number]) => boolean) => glyphs.filter(where).length;
    expect(count((g) => g.right <= first)).toBe(outLeft);
    expect(count((g) => g.left >= first && g.right <= centreLeft)).toBe(left);
    expect(count((g) => g.left >= centreRight && g.right <= last)).toBe(right);
    expect(count((g) => g.left >= last)).toBe(outRight);

    // It still scans, as SVG and as PNG.
    const decoded = symbology === 'upc-a' ? `0${data}` : data;
    expect(await decodeBarcode(svgToPng(res.bytes, 800))).toContainEqual({ format: symbology === 'ean-8' ? 'EAN8' : 'EAN13', text: decoded });
    const png = await image('/api/v1/barcode', { symbology, data, format: 'png' });
    expect(await decodeBarcode(png.bytes)).toContainEqual({ format: symbology === 'ean-8' ? 'EAN8' : 'EAN13', text: decoded });
  });

  it.each(['ean-13', 'itf-14', 'gs1-128', 'code-128'])('%s SVG has a width and height (an inline SVG would otherwise be 0 px wide), the PNG size', async (symbology) => {
    const data = { 'ean-13': '5901234123457', 'itf-14': '10012345678902', 'gs1-128': '(01)10012345678902(10)ABC', 'code-128': 'Hello-123' }[symbology];
    const svg = (await image('/api/v1/barcode', { symbology, data, format: 'svg', scale: 2 })).bytes.toString();
    const [, width, height] = /<svg[^>]* width="(\d+)" height="(\d+)"/.exec(svg) ?? [];
    const [, vbWidth, vbHeight] = /viewBox="0 0 (\d+) (\d+)"/.exec(svg) ?? [];
    expect(width).toBeDefined();
    expect([width, height]).toEqual([vbWidth, vbHeight]);
    const png = await image('/api/v1/barcode', { symbology, data, format: 'png', scale: 2 });
    expect(pngSize(png.bytes)).toEqual({ width: Number(width), height: Number(height) });
  });
});

describe('render pool overload', () => {
  it('answers 503 render_busy with Retry-After when the queue is full, never queueing without bound', async () => {
    const small = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000', RENDER_THREADS: '1', RENDER_QUEUE: '1' });
    try {
      const ws = await workspaceWithKey(small.url);
      const c = client(small.url, ws.key);
      const { body } = await c.post('/api/v1/links', { destination: 'https://example.com/busy' });
      const results = await Promise.all(Array.from({ length: 24 }, (_, i) => call(small.url, 'POST', '/api/v1/qr', { key: ws.key, body: { shortId: body.shortId, format: 'png', size: 1000 + (i % 20) } })));
      const busy = results.filter((r) => r.status === 503);
      expect(busy.length).toBeGreaterThan(0);
      expect(busy[0]!.body.error.code).toBe('render_busy');
      expect(busy[0]!.headers.get('retry-after')).toBe('1');
      expect(results.filter((r) => r.status === 200).length).toBeGreaterThan(0);
      expect(results.every((r) => r.status === 200 || r.status === 503)).toBe(true);
    } finally {
      await small.close();
    }
  });
});
