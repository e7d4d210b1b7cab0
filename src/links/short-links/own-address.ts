// Whether a URL points at this service's own short links, however its address is written.
// The ingress answers GET /:shortId on any host name, so a link whose destination reaches
// the ingress again would redirect into itself, recording a scan (and a webhook) per hop.
// Both sides are WHATWG URLs, so case, IDN, default ports and the decimal, hex and short
// IPv4 forms are already normalised; what is left is compared here.
import ipaddr from 'ipaddr.js';

interface Endpoint {
  host: string;
  port: number;
}

/** The host in one canonical form: no trailing dots, no brackets, IPv4-mapped IPv6 as IPv4. */
function canonicalHost(url: URL): string {
  const host = url.hostname.replace(/\.+$/, '').replace(/^\[|\]$/g, '');
  return ipaddr.isValid(host) ? ipaddr.process(host).toString() : host;
}

/** This machine, whatever it is called: localhost names (RFC 6761), loopback and unspecified addresses. */
function isThisMachine(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (!ipaddr.isValid(host)) return false;
  const range = ipaddr.parse(host).range();
  return range === 'loopback' || range === 'unspecified';
}

const endpoint = (url: URL): Endpoint => ({ host: canonicalHost(url), port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80) });

// A short domain usually serves both schemes (http redirecting to https), so the two default ports are one.
const isDefaultPort = (port: number) => port === 80 || port === 443;

function same(a: Endpoint, b: Endpoint): boolean {
  const host = a.host === b.host || (isThisMachine(a.host) && isThisMachine(b.host));
  return host && (a.port === b.port || (isDefaultPort(a.port) && isDefaultPort(b.port)));
}

/** The service's own addresses (its short-link base and public base URLs), to test link URLs against. */
export class OwnAddresses {
  private readonly own: Endpoint[];
  /** Other host names that serve short links on the default ports (verified branded domains, aliases), when known. */
  private served: () => ReadonlySet<string> = () => new Set();

  constructor(baseUrls: readonly string[]) {
    this.own = baseUrls.filter(Boolean).map((u) => endpoint(new URL(u)));
  }

  /** Also refuse these hosts (asked at each check, so a domain verified later counts). */
  alsoServedBy(hosts: () => ReadonlySet<string>): void {
    this.served = hosts;
  }

  /** True when `url` (an http(s) URL) reaches this service. */
  includes(url: URL): boolean {
    const target = endpoint(url);
    return this.own.some((o) => same(o, target)) || (isDefaultPort(target.port) && this.served().has(target.host));
  }
}
