// What issue 33's destinations cost a redirect: the real redirect route (redirect-route.ts) in a
// Fastify app of its own, driven by light-my-request (app.inject, no sockets), CPU per redirect of
//   baseline  a route in the same app answering 302 from a Map with svc_cid appended (what a
//             redirect does at least)
//   plain     a link using none of the new features (forwardQuery and clickId at their defaults)
//   plainQ    the same link, the short URL carrying a query (forwarded)
//   geoAb     a link with geo destinations and A/B variants, visitors from 1,000 addresses
//             (the country looked up in memory, the variant hashed)
// in ROUNDS alternating rounds of N requests each; the ratios to the baseline of the same round,
// median over the rounds. Scans are not journaled (record is a no-op) and the per-IP limit is
// admitted in memory, so the figures are the route's own work. Needs Redis (the limiter's).
// Results: bench/results/link-routing.json. Run: node bench/link-routing.bench.ts
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import Fastify from 'fastify';
import { loadConfig } from '../src/platform/config.ts';
import { createLogger } from '../src/platform/logger.ts';
import { createRedis } from '../src/platform/redis.ts';
import { addComponents } from '../src/platform/http/components.ts';
import { ErrorBody, HttpRefusal } from '../src/platform/http/errors.ts';
import { ClickIds } from '../src/links/scans/click-id.ts';
import type { LinkState } from '../src/links/changelog/link-state.ts';
import { redirectRoutes, type RedirectDeps } from '../src/links/redirect/redirect-route.ts';
import { withClickId } from '../src/links/redirect/destination.ts';
import { routingOf } from '../src/links/redirect/link-routing.ts';
import { VisitorCountry } from '../src/links/redirect/visitor-country.ts';

const N = Number(process.env.BENCH_REQUESTS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

const link = (shortId: string, extra: Partial<LinkState> = {}): LinkState => ({
  id: shortId === 'plain1' ? '00000000-0000-4000-8000-000000000011' : '00000000-0000-4000-8000-000000000022', workspaceId: '00000000-0000-4000-8000-000000000001', shortId,
  destination: 'https://example.com/landing?ref=bench', iosUrl: null, androidUrl: null, tags: [], pixels: [], isActive: true,
  expiresAt: null, scanLimit: null, exhaustedAt: null, campaignId: null, version: 1, updatedAt: Date.now(),
  forwardQuery: true, clickId: true, expiredUrl: null, validFrom: null, geo: {}, testVariants: [], ...extra,
}) as LinkState; // fields other features add are left out: the route reads them as absent

const links = new Map<string, LinkState>([
  ['plain1', link('plain1')],
  ['geoab1', link('geoab1', {
    geo: { DE: 'https://example.de/', FR: 'https://example.fr/', GB: 'https://example.co.uk/' },
    testVariants: [{ url: 'https://example.com/a', percent: 50 }, { url: 'https://example.com/b', percent: 50 }],
  })],
]);
for (const l of links.values()) routingOf(l);

// 1,000 visitors: addresses in networks DB-IP places in Germany, France, Britain and the US.
const NETS = ['2a01:4f8', '2a01:e0a', '2001:8b0', '2600:1f18'];
const ips = Array.from({ length: 1000 }, (_, i) => `${NETS[i % 4]}:${(i * 7919 % 65536).toString(16)}:${i.toString(16)}::1`);

async function main() {
  const config = loadConfig();
  const log = createLogger({ LOG_LEVEL: 'error' }, 'bench');
  const redis = createRedis(config, log);
  const clickIds = new ClickIds('bench-click-id-secret-of-32-characters!');
  const countries = new VisitorCountry(log);
  await countries.load();
  const app = Fastify({ trustProxy: true });
  addComponents(app as never, [ErrorBody, HttpRefusal]);
  // What the platform's server decorates (buildServer): per-IP limits count an IPv6 client by its /64.
  app.decorate('ipv6LimitPrefixLength', 64);
  const deps = {
    cache: { get: (key: string) => links.get(key) },
    readThrough: { find: async () => undefined },
    scanLimits: {},
    clickIds,
    redis,
    log,
    domains: { resolve: () => null },
    record: () => {},
    redirectsPerMinute: 1e9,
    countries,
  } as unknown as RedirectDeps;
  // The baseline: a 302 from a Map, with a click ID signed and appended, as every redirect does.
  app.get('/base/:shortId', (request, reply) => {
    const l = links.get((request.params as { shortId: string }).shortId)!;
    const cid = clickIds.sign({ scanId: '00000000-0000-4000-8000-000000000000', linkId: l.id, workspaceId: l.workspaceId });
    reply.header('cache-control', 'private, no-store, max-age=0').redirect(withClickId(l.destination, cid), 302);
  });
  await redirectRoutes(app as never, deps);
  await app.ready();

  const cases = {
    baseline: (i: number) => ({ url: '/base/plain1', ip: ips[i % 1000]! }),
    plain: (i: number) => ({ url: '/plain1', ip: ips[i % 1000]! }),
    plainQ: (i: number) => ({ url: '/plain1?utm_source=flyer&table=12', ip: ips[i % 1000]! }),
    geoAb: (i: number) => ({ url: '/geoab1', ip: ips[i % 1000]! }),
  };
  type Case = keyof typeof cases;
  const run = async (name: Case): Promise<number> => {
    const at = process.cpuUsage();
    for (let i = 0; i < N; i++) {
      const { url, ip } = cases[name](i);
      const res = await app.inject({ method: 'GET', url, headers: { 'user-agent': UA, 'x-forwarded-for': ip } });
      if (res.statusCode !== 302) throw new Error(`${name}: ${res.statusCode} ${res.body}`);
    }
    const used = process.cpuUsage(at);
    return (used.user + used.system) / N;
  };
  for (const name of Object.keys(cases) as Case[]) await run(name); // warm-up
  const rounds: Record<Case, number>[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const round = {} as Record<Case, number>;
    for (const name of Object.keys(cases) as Case[]) round[name] = await run(name);
    rounds.push(round);
    console.log(`round ${r + 1}: ${Object.entries(round).map(([k, v]) => `${k} ${v.toFixed(1)} µs`).join(', ')}`);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const ratio = (name: Case) => median(rounds.map((r) => r[name] / r.baseline));
  const result = {
    requestsPerRound: N,
    rounds,
    medianCpuMicrosPerRedirect: Object.fromEntries((Object.keys(cases) as Case[]).map((k) => [k, Math.round(median(rounds.map((r) => r[k])) * 10) / 10])),
    medianRatioToBaseline: { plain: ratio('plain'), plainWithQuery: ratio('plainQ'), geoAndAb: ratio('geoAb'), geoAndAbOverPlain: median(rounds.map((r) => r.geoAb / r.plain)) },
  };
  console.log(JSON.stringify(result.medianRatioToBaseline));
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(new URL('./results/link-routing.json', import.meta.url), JSON.stringify({ measuredAt: new Date().toISOString(), machine: { cores: cpus().length, memoryGiB: Math.round(totalmem() / 1024 ** 3) }, ...result }, null, 2) + '\n');
  await app.close();
  redis.disconnect();
}

await main();
