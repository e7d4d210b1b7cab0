// The first path segments that a product may not hand out as a root-level
// identifier (a short link's `/:shortId`): every segment the server has a route
// for, collected as routes are registered, so a product that adds `/emails` or
// `/t/...` reserves it without anyone keeping a list; and a few names no
// route serves today: those browsers, crawlers and people look for at the root
// of any web host, and those of the service's own documents (openapi, mcp),
// kept free in case they are ever served at the root.
const CONVENTIONAL = ['favicon.ico', 'robots.txt', 'sitemap.xml', 'well-known', 'docs', 'static', 'assets', 'openapi', 'mcp'];

export class ReservedPaths {
  private readonly segments = new Set<string>(CONVENTIONAL);

  /** Reserves the first segment of a route's URL, unless it is a parameter or a wildcard. */
  addRoute(url: string): void {
    const first = url.split('/')[1] ?? '';
    if (first && !first.startsWith(':') && !first.includes('*')) this.segments.add(first.toLowerCase());
  }

  /** Every reserved segment, lower-cased. */
  list(): string[] {
    return [...this.segments];
  }

  /** Whether `segment` (compared without case) is taken by the service. */
  has(segment: string): boolean {
    return this.segments.has(segment.toLowerCase());
  }
}
