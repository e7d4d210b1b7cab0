// Which host serves which links, in memory, so a redirect resolves its Host
// without any I/O: the base domain's hosts (configuration) and every verified
// branded domain, read from Postgres at start and again every few seconds (a
// domain verified or deleted through another ingress is served or dropped here
// within that time; through this one, at once: refresh()). With them, each
// domain's fallbacks (where its root and unknown short IDs redirect), so those
// redirects need no I/O either.
import type { Pool } from '../../platform/postgres/pool.ts';
import type { Logger } from '../../platform/logger.ts';
import { hostName } from './host-names.ts';

/** What a Host serves: the base domain (null), a branded domain (its id), or nothing (undefined). */
export type ServedDomain = string | null | undefined;

/** Where a branded domain sends the visitors that name no link, and whose domain it is. */
export interface DomainFallbacks {
  workspaceId: string;
  name: string;
  rootUrl: string | null;
  notFoundUrl: string | null;
}

export class ServedDomains {
  private readonly pg: Pool;
  /** The host names of the base domain. */
  private readonly baseHosts: ReadonlySet<string>;
  private readonly intervalMs: number;
  private readonly log: Logger;
  /** Verified branded domain name → domain id. Replaced whole on each read. */
  private branded = new Map<string, string>();
  /** The verified branded domains' names. */
  private serving: ReadonlySet<string> = new Set();
  /** Domain id → its fallbacks, for the verified domains that have one. */
  private fallbacks = new Map<string, DomainFallbacks>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    pg: Pool,
    baseHosts: ReadonlySet<string>,
    intervalMs: number,
    log: Logger,
  ) {
    this.pg = pg;
    this.baseHosts = baseHosts;
    this.intervalMs = intervalMs;
    this.log = log;
  }

  /** The domain a request's Host header names; a request without one is the base domain's. */
  resolve(hostHeader: string | undefined): ServedDomain {
    const host = hostName(hostHeader);
    if (host === undefined || this.baseHosts.has(host)) return null;
    return this.branded.get(host);
  }

  /** The fallbacks of a verified branded domain that has one (undefined: none, or not a branded domain). */
  fallbacksOf(domainId: string | null): DomainFallbacks | undefined {
    return domainId === null ? undefined : this.fallbacks.get(domainId);
  }

  /** The verified branded domains' names (a link may not point at them: it would redirect into the service). */
  servingHosts(): ReadonlySet<string> {
    return this.serving;
  }

  /** Whether the name is one of the base domain's hosts (a workspace cannot add it). */
  isBaseHost(name: string): boolean {
    return this.baseHosts.has(hostName(name)!);
  }

  async start(): Promise<void> {
    await this.refresh();
    this.schedule();
  }

  /** Reads the verified domains again. */
  async refresh(): Promise<void> {
    const { rows } = await this.pg.query<{ id: string; name: string; workspace_id: string; root_url: string | null; not_found_url: string | null }>(
      'SELECT id, name, workspace_id, root_url, not_found_url FROM link_domains WHERE verified_at IS NOT NULL AND deleted_at IS NULL',
    );
    this.branded = new Map(rows.map((r) => [r.name, r.id]));
    this.serving = new Set(this.branded.keys());
    this.fallbacks = new Map(rows.filter((r) => r.root_url !== null || r.not_found_url !== null)
      .map((r) => [r.id, { workspaceId: r.workspace_id, name: r.name, rootUrl: r.root_url, notFoundUrl: r.not_found_url }]));
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.refresh()
        .catch((err: unknown) => this.log.warn({ err }, 'branded domains could not be read; the ones known are served meanwhile'))
        .finally(() => this.schedule());
    }, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
