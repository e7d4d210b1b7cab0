// Host names as redirects compare them: the Host header's name without its port,
// lower-cased, without a trailing dot; an IPv6 literal keeps its brackets.
import { listSetting } from '../../platform/config.ts';

/** The host name of a Host header (or of a configured alias); undefined for none. */
export function hostName(header: string | undefined): string | undefined {
  if (!header) return undefined;
  let host = header.toLowerCase();
  if (host.charCodeAt(0) === 91 /* [ */) {
    const end = host.indexOf(']');
    host = end === -1 ? host : host.slice(0, end + 1);
  } else {
    const colon = host.indexOf(':');
    // Two colons or more: a bare IPv6 literal (an alias written without brackets).
    if (colon !== -1) host = host.indexOf(':', colon + 1) === -1 ? host.slice(0, colon) : `[${host}]`;
  }
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

/** The host name of a base URL (https://go.example.com → go.example.com). */
export const hostOfUrl = (url: string): string => hostName(new URL(url).host)!;

/** Loopback names that serve the base domain outside production. */
const LOCAL_ALIASES = ['localhost', '127.0.0.1', '::1'];

/**
 * The host names that serve the base domain's short links: the short link base, the public API's
 * host, the configured aliases, and outside production the loopback names.
 */
export function baseDomainHosts(config: { SHORT_LINK_BASE_URL: string; PUBLIC_BASE_URL: string; SHORT_LINK_HOST_ALIASES: string; NODE_ENV: string }): Set<string> {
  const hosts = [config.SHORT_LINK_BASE_URL || config.PUBLIC_BASE_URL, config.PUBLIC_BASE_URL].map(hostOfUrl);
  const aliases = [...listSetting(config.SHORT_LINK_HOST_ALIASES), ...(config.NODE_ENV === 'production' ? [] : LOCAL_ALIASES)];
  return new Set([...hosts, ...aliases.map((a) => hostName(a)!)]);
}
