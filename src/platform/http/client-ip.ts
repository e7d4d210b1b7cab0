// The client address of a request, and the subject of the per-IP limits.
// Fastify's trustProxy (TRUSTED_PROXIES) decides whether X-Forwarded-For is
// believed, so request.ip is already the right address.
//
// Per-IP limits count an IPv6 client by its network, not its address: a host
// is usually given a whole /64 and can rotate through 2^64 addresses in it.
import type { FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';
import { RecentCache } from '../recent-cache.ts';

export const clientIp = (request: FastifyRequest): string => request.ip;

/**
 * The subject a per-IP limit counts `ip` under: an IPv4 address as it is (also when written as
 * IPv4-mapped IPv6, `::ffff:1.2.3.4`), an IPv6 address as its /`ipv6PrefixLength` network
 * (`2001:db8:1:2::/64`). Anything unparseable is its own subject.
 */
export function limitKey(ip: string, ipv6PrefixLength: number): string {
  if (!ipaddr.isValid(ip)) return ip;
  // process() turns an IPv4-mapped IPv6 address into the IPv4 address.
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  const network = ipaddr.IPv6.networkAddressFromCIDR(`${address.toNormalizedString()}/${ipv6PrefixLength}`);
  return `${network.toString()}/${ipv6PrefixLength}`;
}

// Parsing an address costs 1.6 µs (IPv4) to 9 µs (IPv6), on every redirect; clients come back, so
// their subjects are remembered (the prefix length is one per server, but part of the key all the same).
const recentKeys = new RecentCache<string>(50_000);

/** The per-IP limit subject of a request's client. */
export function clientLimitKey(request: FastifyRequest): string {
  return limitKeyOf(request.ip, request.server.ipv6LimitPrefixLength);
}

/** limitKey, remembered for the clients seen lately. */
export function limitKeyOf(ip: string, prefixLength: number): string {
  return recentKeys.get(`${prefixLength} ${ip}`, () => limitKey(ip, prefixLength));
}
