// DNS lookups for domain verification, shared by the products: a resolver on
// configured servers (a test's own DNS server, a company resolver) or the
// system's, and TXT records read whole (a record's strings joined).
import { Resolver } from 'node:dns/promises';

/** A resolver on the given servers (ip or ip:port, comma-separated), or the system's when empty. */
export function createResolver(servers: string): Resolver {
  const resolver = new Resolver({ timeout: 2000, tries: 2 });
  const list = servers.split(',').map((s) => s.trim()).filter(Boolean);
  if (list.length > 0) resolver.setServers(list);
  return resolver;
}

/** The TXT records at a name, each whole; `missing` when the name has none, `lookup_failed` when DNS did not answer. */
export type TxtLookup = { found: string[] } | { missing: true } | { lookupFailed: string };

export async function txtRecords(resolver: Resolver, name: string): Promise<TxtLookup> {
  try {
    return { found: (await resolver.resolveTxt(name)).map((chunks) => chunks.join('')) };
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ENOTFOUND' || code === 'ENODATA') return { missing: true };
    return { lookupFailed: code ?? 'error' };
  }
}
