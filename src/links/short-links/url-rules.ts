// What a link URL may be: absolute http(s), no user:password part, at most
// 2048 characters, and a host, not this service's own. Checked here so that every
// entry point (REST, bulk, MCP) refuses the same URLs with the same message.
import type { OwnAddresses } from './own-address.ts';

export const MAX_URL_LENGTH = 2048;

/**
 * Returns why the URL is refused, or undefined when it is acceptable.
 * `own` are the service's addresses: a link pointing at them would redirect into itself.
 */
export function urlProblem(value: string, own?: OwnAddresses): string | undefined {
  if (value.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must use http or https';
  if (url.username || url.password) return 'must not contain credentials';
  if (!url.hostname) return 'must have a host';
  if (own?.includes(url)) return "must not point at this service's own short links";
  return undefined;
}

/** The URL in its normal form (what `Location` will carry): control characters gone, escapes canonical. */
export const normalizeUrl = (value: string): string => new URL(value).href;
