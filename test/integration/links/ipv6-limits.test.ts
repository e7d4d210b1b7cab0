// Per-IP limits count an IPv6 client by its /64 (IPV6_LIMIT_PREFIX_LENGTH), an
// IPv4 client by its address, and an IPv4-mapped IPv6 address as the IPv4
// address: rotating addresses inside one's /64 does not buy more redirects or
// more guesses at keys.
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, client, freshIp, sameNetwork, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { scan } from '../../support/links/scans.ts';
import { eventually } from '../../support/env.ts';

const REDIRECTS = 10;
let ingress: TestIngress;

beforeAll(async () => {
  ingress = await startIngress({ REDIRECTS_PER_MINUTE_PER_IP: String(REDIRECTS) });
});
afterAll(async () => {
  await ingress?.close();
});

const badKey = `lk_live_${'x'.repeat(32)}`;
const failAuth = (ip: string) => call(ingress.url, 'GET', '/api/v1/links', { key: badKey, ip });
const randomIpv4 = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

describe('failed-authentication allowance', () => {
  it('counts every address of one IPv6 /64 together; another /64 has its own', async () => {
    const ip = freshIp();
    for (let i = 0; i < 10; i++) expect((await failAuth(sameNetwork(ip))).status).toBe(401);
    const eleventh = await failAuth(sameNetwork(ip));
    expect(eleventh.status).toBe(429);
    expect(eleventh.body.error.code).toBe('auth_rate_limited');
    expect((await failAuth(freshIp())).status).toBe(401);
  });

  it('counts IPv4 per address, and an IPv4-mapped IPv6 address as that IPv4 address', async () => {
    const ip = randomIpv4();
    for (let i = 0; i < 10; i++) expect((await failAuth(i % 2 === 0 ? ip : `::ffff:${ip}`)).status).toBe(401);
    expect((await failAuth(`::ffff:${ip}`)).status).toBe(429);
    expect((await failAuth(ip)).status).toBe(429);
    const neighbour = ip.replace(/\.(\d+)$/, (_m, last: string) => `.${(Number(last) % 254) + 1}`);
    expect((await failAuth(neighbour)).status).toBe(401);
  });
});

describe('redirect limit', () => {
  it('counts every address of one IPv6 /64 together; another /64 has its own', async () => {
    const ws = await workspaceWithKey(ingress.url);
    const created = await client(ingress.url, ws.key).post('/api/v1/links', { destination: 'https://example.com/v6' });
    expect(created.status).toBe(201);
    const { shortId } = created.body;
    await eventually(async () => ingress.app.redirects.cache.get(shortId) !== undefined, 5000, 20);
    const ip = freshIp();
    for (let i = 0; i < REDIRECTS; i++) expect((await scan(ingress.url, shortId, { 'x-forwarded-for': sameNetwork(ip) })).status).toBe(302);
    const over = await scan(ingress.url, shortId, { 'x-forwarded-for': sameNetwork(ip), accept: 'application/json' });
    expect(over.status).toBe(429);
    expect(JSON.parse(over.body).error.code).toBe('redirect_rate_limited');
    expect((await scan(ingress.url, shortId, { 'x-forwarded-for': freshIp() })).status).toBe(302);
  });
});
