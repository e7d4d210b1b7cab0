// One piece of a process measured alone (bench/memory.bench.ts starts this file in a
// fresh node process with --expose-gc, once per piece): the process's RSS and V8 heap
// after a full GC and a pause, then the piece loaded (and used once, as a process
// uses it), a full GC and a pause again. The difference is what the piece holds.
// Prints one JSON line: { component, rssMiB, heapUsedMiB, externalMiB, notes }.
//
//   node --expose-gc bench/memory-component.ts geoip | user-agent | render-thread | thread-ts | thread-js | caches
import { Worker } from 'node:worker_threads';

const MiB = 1024 * 1024;
const gc = globalThis.gc as (() => void) | undefined;
if (!gc) throw new Error('run with --expose-gc');

async function settled() {
  gc!();
  await new Promise((r) => setTimeout(r, 1000));
  gc!();
  const m = process.memoryUsage();
  return { rss: m.rss / MiB, heapUsed: m.heapUsed / MiB, external: m.external / MiB };
}

/** A thread that imports one module and then waits; resolves once the import is done. */
async function thread(module: string): Promise<Worker> {
  const worker = new Worker(`import(${JSON.stringify(module)}).then(() => { require('node:worker_threads').parentPort.postMessage('loaded'); setInterval(() => {}, 60_000); })`, { eval: true });
  await new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return worker;
}

/** A spread of addresses, a fifth of them IPv6 (deterministic, so runs compare). */
function randomAddress(i: number): string {
  const x = Math.imul(i + 1, 2_654_435_761) >>> 0;
  if (i % 5 === 4) return `2a0${x % 10}:${(x >>> 8).toString(16)}::${(x & 0xffff).toString(16)}`;
  return `${(x >>> 24) || 1}.${(x >>> 16) & 255}.${(x >>> 8) & 255}.${x & 255}`;
}

const USER_AGENT = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1';

const pieces: Record<string, () => Promise<{ keep: unknown; notes?: Record<string, unknown> }>> = {
  // The IP database of the scans (both files of DB-IP City Lite, looked up on disk through a bounded page cache):
  // opened, then 50,000 lookups of random addresses, which fill the page cache to its bound.
  geoip: async () => {
    const { Geo } = await import('../src/links/scans/geo.ts');
    const geo = Geo.open();
    const started = performance.now();
    for (let i = 0; i < 50_000; i++) geo.lookup(randomAddress(i));
    return { keep: geo, notes: { lookup: geo.lookup('81.2.69.160'), lookupsPerSecond: Math.round(50_000 / ((performance.now() - started) / 1000)) } };
  },
  // ua-parser-js and isbot, one User-Agent parsed.
  'user-agent': async () => {
    const { describeVisitor } = await import('../src/links/scans/visitor.ts');
    const visitor = describeVisitor({ userAgent: USER_AGENT, referrer: undefined, query: new URLSearchParams(), ip: '81.2.69.160', timestamp: Date.now(), salt: 's' });
    return { keep: visitor };
  },
  // One render thread of the QR pool, started by its first render (a 512 px PNG).
  'render-thread': async () => {
    const { RenderPool } = await import('../src/links/qr/render-pool.ts');
    const pool = new RenderPool({ threads: 1 });
    const started = Date.now();
    const result = await pool.render({ kind: 'qr', text: 'https://example.com/abc', format: 'png', size: 512, margin: 4, errorCorrection: 'M', fgColor: '#000000', bgColor: '#ffffff' });
    const firstMs = Date.now() - started;
    const again = Date.now();
    await pool.render({ kind: 'qr', text: 'https://example.com/abd', format: 'png', size: 512, margin: 4, errorCorrection: 'M', fgColor: '#000000', bgColor: '#ffffff' });
    return { keep: pool, notes: { firstRenderMs: firstMs, nextRenderMs: Date.now() - again, pngBytes: 'body' in result ? result.body.byteLength : null } };
  },
  // An idle thread whose code is TypeScript (Node strips the types in each thread) or JavaScript: the difference is the loader's cost per thread.
  'thread-ts': async () => ({ keep: await thread(new URL('../src/platform/within.ts', import.meta.url).href) }),
  'thread-js': async () => ({ keep: await thread('node:os') }),
  // The bounded memos of the redirect and scan path, each filled to its bound with distinct entries.
  caches: async () => {
    const { RecentCache } = await import('../src/platform/recent-cache.ts');
    const filled = (size: number, value: (i: number) => unknown) => {
      const cache = new RecentCache<unknown>(size);
      for (let i = 0; i < size; i++) cache.get(`key-${i}-81.2.${i % 256}.${i >> 8}|${USER_AGENT.slice(0, 40)}`, () => value(i));
      return cache;
    };
    return {
      keep: [
        filled(20_000, (i) => ({ country: 'GB', region: 'England', city: `City ${i}` })), // geo.ts
        filled(5000, (i) => ({ device: 'mobile', os: 'iOS', browser: `Mobile Safari ${i}`, isBot: false })), // visitor.ts agents
        filled(20_000, (i) => `visitor-hash-${i}-0123456789`), // visitor.ts visitor ids
        filled(50_000, (i) => `81.2.${i % 256}.${i >> 8}`), // client-ip.ts
        filled(10_000, (i) => i % 12), // cached-partitioner.ts
      ],
      notes: { entries: 105_000 },
    };
  },
};

const name = process.argv[2] ?? '';
const piece = pieces[name];
if (!piece) throw new Error(`unknown component "${name}"; one of ${Object.keys(pieces).join(', ')}`);
const before = await settled();
const { keep, notes } = await piece();
const after = await settled();
const round = (n: number) => Number(n.toFixed(1));
console.log(JSON.stringify({
  component: name,
  rssMiB: round(after.rss - before.rss),
  heapUsedMiB: round(after.heapUsed - before.heapUsed),
  externalMiB: round(after.external - before.external),
  notes,
}));
void keep;
process.exit(0);
