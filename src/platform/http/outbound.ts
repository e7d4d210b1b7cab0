// Fetches from addresses the service does not control (an image by URL; later
// webhooks) without letting a caller reach inside our network: the address is
// checked at connect time (a custom DNS lookup, so a name that resolves to a
// private address is refused even if it changed after a first check), private,
// loopback, link-local and other non-public ranges are refused unless the host
// is on the allow-list, redirects are not followed, and time and size are bounded.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

// IPv6 unicast on the internet is 2000::/3 (IANA's IPv6 address space registry); the rest is
// reserved or local, among it the deprecated IPv4-compatible ::/96 that ipaddr.js calls unicast.
const GLOBAL_IPV6 = ipaddr.parseCIDR('2000::/3');

/**
 * True for addresses that are not on the public internet: anything in a special-purpose range
 * of IANA's registries (private, loopback, link-local, shared, documentation, benchmarking,
 * NAT64, 6to4, Teredo, IPv4-translated, site-local, multicast, reserved…), as ipaddr.js keeps
 * them (`range()` is `unicast` only outside all of them), and IPv6 outside 2000::/3. An
 * IPv4-mapped address (::ffff:a.b.c.d) is judged by its IPv4 address. Not an address: true.
 */
export function isPrivateAddress(address: string): boolean {
  // isIP is strict (no 0x7f.1 or 127.1 forms, which ipaddr.js would read as addresses).
  if (isIP(address) === 0) return true;
  const ip = ipaddr.process(address);
  if (ip.range() !== 'unicast') return true;
  return ip.kind() === 'ipv6' && !ip.match(GLOBAL_IPV6);
}

export class OutboundError extends Error {
  readonly reason: 'address_refused' | 'timeout' | 'too_large' | 'status' | 'redirect' | 'network' | 'bad_url';

  constructor(reason: 'address_refused' | 'timeout' | 'too_large' | 'status' | 'redirect' | 'network' | 'bad_url', message: string) {
    super(message);
    this.reason = reason;
  }
}

export interface OutboundOptions {
  timeoutMs: number;
  maxBytes: number;
  /** Host names or addresses that may be private (tests, internal services an operator trusts). */
  allowHosts: readonly string[];
}

/** A URL an outbound request may go to, and the DNS lookup that refuses private addresses at connect time. */
export function outboundTarget(rawUrl: string, allowHosts: readonly string[]): { url: URL; lookup: LookupFunction } {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new OutboundError('bad_url', 'not an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new OutboundError('bad_url', 'only http and https URLs can be fetched');
  if (url.username || url.password) throw new OutboundError('bad_url', 'URLs with credentials are refused');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const allowed = allowHosts.includes(host);
  // An address literal skips DNS, so it is checked here; names are checked in the lookup.
  if (isIP(host) && !allowed && isPrivateAddress(host)) throw new OutboundError('address_refused', `${host} is not a public address`);
  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    dnsLookup(hostname, { ...lookupOptions, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 4);
      const list = addresses as LookupAddress[];
      const bad = list.find((a) => isPrivateAddress(a.address));
      if (bad && !allowed) return callback(new OutboundError('address_refused', `${hostname} resolves to ${bad.address}, not a public address`), '', 4);
      if ((lookupOptions as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
  return { url, lookup };
}

export async function fetchPublic(rawUrl: string, options: OutboundOptions): Promise<{ bytes: Buffer; contentType: string }> {
  const { url, lookup } = outboundTarget(rawUrl, options.allowHosts);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.get(url, { lookup, timeout: options.timeoutMs, headers: { 'user-agent': 'linkmail-fetch/1', accept: 'image/*' } }, (response) => {
      const status = response.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        response.resume();
        return reject(new OutboundError('redirect', `answered ${status}; redirects are not followed`));
      }
      if (status < 200 || status >= 300) {
        response.resume();
        return reject(new OutboundError('status', `answered HTTP ${status}`));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxBytes) {
          request.destroy();
          reject(new OutboundError('too_large', `larger than ${options.maxBytes} bytes`));
        } else chunks.push(chunk);
      });
      response.on('end', () => resolve({ bytes: Buffer.concat(chunks), contentType: String(response.headers['content-type'] ?? '') }));
      response.on('error', (err) => reject(new OutboundError('network', err.message)));
    });
    // The whole exchange, not only the idle time between packets, is bounded.
    const deadline = setTimeout(() => request.destroy(new OutboundError('timeout', `no complete answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    request.on('close', () => clearTimeout(deadline));
    request.on('timeout', () => request.destroy(new OutboundError('timeout', `no answer within ${options.timeoutMs} ms`)));
    request.on('error', (err) => reject(err instanceof OutboundError ? err : new OutboundError('network', err.message)));
  });
}
