// A link may not point at the service's own short links, however the address is
// written: the short domain with a trailing dot, in capitals, with its default port
// or the other scheme's; another name or address of a loopback ingress; the
// IPv4-mapped IPv6, decimal or hex form of an address that WHATWG URL normalises.
// Each would be a redirect loop that records a scan (and fires webhooks) at every hop.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';

const PORT = 39_517; // the public base's port: never listened on, only compared
let named: TestIngress;
let byAddress: TestIngress;
let namedApi: ReturnType<typeof client>;
let addressApi: ReturnType<typeof client>;

beforeAll(async () => {
  named = await startIngress({ SHORT_LINK_BASE_URL: 'https://Go.Example.com', PUBLIC_BASE_URL: `http://127.0.0.1:${PORT}`, API_RATE_LIMIT_PER_MINUTE: '100000' });
  byAddress = await startIngress({ SHORT_LINK_BASE_URL: 'https://203.0.113.10', API_RATE_LIMIT_PER_MINUTE: '100000' });
  namedApi = client(named.url, (await workspaceWithKey(named.url)).key);
  addressApi = client(byAddress.url, (await workspaceWithKey(byAddress.url)).key);
}, 120_000);

afterAll(async () => {
  await named?.close();
  await byAddress?.close();
});

const OWN_NAMED = [
  'https://go.example.com/x', 'https://go.example.com./x', 'https://GO.EXAMPLE.COM/x', 'https://go.example.com:443/x',
  'http://go.example.com/x', 'http://go.example.com:80/x', 'https://go.example.com../x',
  // The public base (the API's host) answers short links too.
  `http://127.0.0.1:${PORT}/x`, `http://localhost:${PORT}/x`, `http://LOCALHOST.:${PORT}/x`, `http://app.localhost:${PORT}/x`,
  `http://127.1:${PORT}/x`, `http://2130706433:${PORT}/x`, `http://0x7f000001:${PORT}/x`, `http://0177.0.0.1:${PORT}/x`, `http://127.0.0.2:${PORT}/x`,
  `http://[::1]:${PORT}/x`, `http://[::ffff:127.0.0.1]:${PORT}/x`, `http://[0:0:0:0:0:0:0:1]:${PORT}/x`, `http://0.0.0.0:${PORT}/x`, `https://127.0.0.1:${PORT}/x`,
];
const OTHERS_NAMED = [
  'https://example.com/x', 'https://sub.go.example.com/x', 'https://go.example.com:8443/x', 'https://go.example.co/x',
  `http://127.0.0.1:${PORT + 1}/x`, `http://localhost:${PORT + 1}/x`, `http://[::1]:${PORT + 1}/x`,
];
const OWN_ADDRESS = [
  'https://203.0.113.10/x', 'https://203.0.113.10:443/x', 'http://203.0.113.10/x', 'https://[::ffff:203.0.113.10]/x', 'https://[::ffff:cb00:710a]/x',
  'https://3405803786/x', 'https://0xcb.0x0.0x71.0xa/x', 'https://203.0.28938/x', 'https://203.0.113.10./x',
];
const OTHERS_ADDRESS = ['https://203.0.113.11/x', 'https://[::ffff:203.0.113.11]/x', 'https://203.0.113.10:8443/x'];

describe('self-redirects', () => {
  it.each(OWN_NAMED)('refuses %s (short domain go.example.com, public base 127.0.0.1)', async (destination) => {
    const res = await namedApi.post('/api/v1/links', { destination });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_url');
  });

  it.each(OTHERS_NAMED)('accepts %s (short domain go.example.com)', async (destination) => {
    expect((await namedApi.post('/api/v1/links', { destination })).status).toBe(201);
  });

  it.each(OWN_ADDRESS)('refuses %s (short domain 203.0.113.10)', async (destination) => {
    const res = await addressApi.post('/api/v1/links', { destination });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_url');
  });

  it.each(OTHERS_ADDRESS)('accepts %s (short domain 203.0.113.10)', async (destination) => {
    expect((await addressApi.post('/api/v1/links', { destination })).status).toBe(201);
  });

  it('refuses them in updates, device URLs and bulk too, changing nothing', async () => {
    const link = (await namedApi.post('/api/v1/links', { destination: 'https://example.com/kept' })).body;
    const patch = await namedApi.patch(`/api/v1/links/${link.id}`, { destination: 'https://go.example.com./loop' });
    expect(patch.status).toBe(400);
    expect(patch.body.error.code).toBe('invalid_url');
    const ios = await namedApi.patch(`/api/v1/links/${link.id}`, { iosUrl: `http://[::1]:${PORT}/loop` });
    expect(ios.body.error.code).toBe('invalid_url');
    const bulk = await namedApi.post('/api/v1/links/bulk', { operations: [{ action: 'update', id: link.id, changes: { androidUrl: 'HTTPS://GO.EXAMPLE.COM:443/loop' } }] });
    expect(bulk.body.results[0]).toMatchObject({ status: 400, error: { code: 'invalid_url' } });
    expect((await namedApi.get(`/api/v1/links/${link.id}`)).body).toEqual(link);
  });
});
