// The browser origins an MCP endpoint serves. A page on another origin that
// reaches the endpoint (through DNS rebinding, say, or a key it was handed)
// is refused; requests without an Origin header come from programs, not
// browsers, and are served. Origins compare as the URL standard serialises
// them: lower-case scheme and host, default port left out.

/** The serialised origin of `text` (scheme://host[:port]), or undefined when it is not an http(s) origin. */
export function normalizeOrigin(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) return undefined;
  if (!/^[a-z]+:\/\/[^/]+\/?$/i.test(text.trim())) return undefined;
  return url.origin;
}

/** A comma-separated list of origins; the entries that are not http(s) origins, for a configuration check. */
export function parseOrigins(list: string): { origins: string[]; invalid: string[] } {
  const entries = list.split(',').map((s) => s.trim()).filter(Boolean);
  const origins: string[] = [];
  const invalid: string[] = [];
  for (const entry of entries) {
    const origin = normalizeOrigin(entry);
    if (origin) origins.push(origin);
    else invalid.push(entry);
  }
  return { origins, invalid };
}

/** Whether a request with this Origin header (undefined: none) may use the endpoint. */
export function originAllowed(header: string | undefined, allowed: ReadonlySet<string>): boolean {
  if (header === undefined) return true;
  const origin = normalizeOrigin(header);
  return origin !== undefined && allowed.has(origin);
}
