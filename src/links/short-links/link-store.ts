// Links in Postgres. Every change also records the link in the changelog
// outbox, in the same transaction, so a committed change always reaches the
// links.changelog topic (see changelog/link-changelog.ts). A change the rules
// refuse changes nothing and says why (LinkRefusal); the entry points decide
// the answer (link-refusals.ts).
import type pg from 'pg';
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import { isUuid } from '../../platform/http/validation.ts';
import type { CreateLinkInput, LinkType, ListLinksQueryType, UpdateLinkInput } from './link-schemas.ts';
import { ReservedPaths } from '../../platform/http/reserved-paths.ts';
import { assignShortId, type ReservedShortIds } from './short-id.ts';
import { OwnAddresses } from './own-address.ts';
import { normalizeUrl, urlProblem } from './url-rules.ts';
import { pixelIdProblem } from './pixel-ids.ts';
import { storedUtm } from './utm.ts';
import { isCountryCode } from './country-codes.ts';
import { hashPassword } from './link-password.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { hostOfUrl } from '../domains/host-names.ts';
import { domainOfLink, type LinkDomainChoice } from './link-domain.ts';
import type { Logger } from '../../platform/logger.ts';
import type { LifetimeScans } from '../scans/lifetime-scans.ts';

export interface LinkRow {
  id: string;
  workspace_id: string;
  short_id: string;
  /** The branded domain (its id and name), or null for the service's base domain. */
  domain_id: string | null;
  domain: string | null;
  destination: string;
  ios_url: string | null;
  android_url: string | null;
  tags: string[];
  pixels: { provider: string; pixelId: string }[];
  expires_at: Date | null;
  scan_limit: number | null;
  exhausted_at: Date | null;
  is_active: boolean;
  campaign_id: string | null;
  title: string | null;
  description: string | null;
  image: string | null;
  /** scrypt hash (link-password.ts); never answered. */
  password_hash: string | null;
  version: string;
  created_at: Date;
  updated_at: Date;
  forward_query: boolean;
  click_id: boolean;
  expired_url: string | null;
  valid_from: Date | null;
  geo: Record<string, string> | null;
  test_variants: { url: string; percent: number }[] | null;
  /** UTM parameters appended on the redirect (utm.ts); null: none. */
  utm: Record<string, string> | null;
}


export function toLink(row: LinkRow, baseUrl: string): LinkType {
  return {
    id: row.id,
    shortId: row.short_id,
    shortUrl: row.domain ? `https://${row.domain}/${row.short_id}` : `${baseUrl}/${row.short_id}`,
    domain: row.domain ?? baseHostOf(baseUrl),
    destination: row.destination,
    iosUrl: row.ios_url,
    androidUrl: row.android_url,
    tags: row.tags,
    pixels: row.pixels as LinkType['pixels'],
    expiresAt: row.expires_at?.toISOString() ?? null,
    scanLimit: row.scan_limit,
    exhaustedAt: row.exhausted_at?.toISOString() ?? null,
    isActive: row.is_active,
    campaignId: row.campaign_id,
    forwardQuery: row.forward_query,
    clickId: row.click_id,
    expiredUrl: row.expired_url,
    validFrom: row.valid_from?.toISOString() ?? null,
    geo: row.geo,
    testVariants: row.test_variants,
    title: row.title,
    description: row.description,
    image: row.image,
    utm: row.utm ?? null,
    passwordProtected: row.password_hash !== null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

const baseHosts = new Map<string, string>();
/** The base domain's host name, as a link's `domain` shows it. */
const baseHostOf = (baseUrl: string): string => {
  let host = baseHosts.get(baseUrl);
  if (host === undefined) baseHosts.set(baseUrl, (host = hostOfUrl(baseUrl)));
  return host;
};

const normalizeTags = (tags: readonly string[]): string[] => [...new Set(tags.map((t) => t.trim().toLowerCase()).filter(Boolean))];

const normalizePixels = (pixels: readonly { provider: string; pixelId: string }[]) =>
  [...new Map(pixels.map((p) => [`${p.provider}\u0000${p.pixelId}`, { provider: p.provider, pixelId: p.pixelId }])).values()];

/** Why a link change was refused. */
export type LinkRefusal =
  | { reason: 'not_found' }
  /** `field` is the URL's JSON path without the leading slash (`destination`, `geo/DE`, `testVariants/0/url`). */
  | { reason: 'invalid_url'; field: string; problem: string }
  | { reason: 'expiry_in_past' }
  | { reason: 'valid_from_after_expiry' }
  | { reason: 'invalid_country'; code: string }
  | { reason: 'invalid_test_variants'; total: number }
  | { reason: 'invalid_pixel_id'; index: number; problem: string }
  | { reason: 'campaign_not_found' }
  /** `domain` names no domain of the workspace (or a deleted one, for a link reactivated on it). */
  | { reason: 'domain_not_found'; domain: string }
  | { reason: 'short_id_reserved'; shortId: string }
  | { reason: 'short_id_taken'; shortId: string; domain?: string }
  /** The link's scans so far could not be counted in time, so its scan limit cannot be set. */
  | { reason: 'scan_count_unavailable' };

/** A link change's result: the value, or why it was refused. */
export type LinkResult<T> = ({ ok: true } & T) | { ok: false; refusal: LinkRefusal };

const refuse = (refusal: LinkRefusal): { ok: false; refusal: LinkRefusal } => ({ ok: false, refusal });

type Checked = Partial<Record<'destination' | 'iosUrl' | 'androidUrl' | 'image' | 'expiredUrl' | 'expiresAt' | 'validFrom', string | null | undefined>> & {
  pixels?: readonly { provider: string; pixelId: string }[];
  geo?: Record<string, string> | null;
  testVariants?: readonly { url: string; percent: number }[] | null;
};

/**
 * Checks the rules a JSON schema cannot express (the first field that breaks one is refused)
 * and returns the values in their stored form: URLs normalised, times in UTC.
 */
function checkFields<T extends Checked>(input: T, own: OwnAddresses): LinkResult<{ value: T }> {
  const out: Checked = { ...input };
  for (const field of ['destination', 'iosUrl', 'androidUrl', 'expiredUrl'] as const) {
    const value = input[field];
    if (typeof value !== 'string') continue;
    const problem = urlProblem(value, own);
    if (problem) return refuse({ reason: 'invalid_url', field, problem });
    out[field] = normalizeUrl(value);
  }
  // A preview image may be served by the service itself (the link's public QR code).
  if (typeof input.image === 'string') {
    const problem = urlProblem(input.image);
    if (problem) return refuse({ reason: 'invalid_url', field: 'image', problem });
    out.image = normalizeUrl(input.image);
  }
  if (typeof input.expiresAt === 'string') {
    if (Date.parse(input.expiresAt) <= Date.now()) return refuse({ reason: 'expiry_in_past' });
    out.expiresAt = new Date(input.expiresAt).toISOString();
  }
  if (typeof input.validFrom === 'string') {
    out.validFrom = new Date(input.validFrom).toISOString();
    if (typeof out.expiresAt === 'string' && Date.parse(out.validFrom) >= Date.parse(out.expiresAt)) return refuse({ reason: 'valid_from_after_expiry' });
  }
  if (input.geo) {
    const geo = checkGeo(input.geo, own);
    if (!geo.ok) return geo;
    out.geo = geo.value;
  }
  if (input.testVariants) {
    const variants = checkTestVariants(input.testVariants, own);
    if (!variants.ok) return variants;
    out.testVariants = variants.value;
  }
  for (const [index, { provider, pixelId }] of (input.pixels ?? []).entries()) {
    const problem = pixelIdProblem(provider, pixelId);
    if (problem) return refuse({ reason: 'invalid_pixel_id', index, problem });
  }
  return { ok: true, value: out as T };
}

/** Geo destinations with upper-case country codes and normalised URLs; an empty map is none (null). */
function checkGeo(geo: Record<string, string>, own: OwnAddresses): LinkResult<{ value: Record<string, string> | null }> {
  const out: Record<string, string> = {};
  for (const [key, url] of Object.entries(geo)) {
    if (!isCountryCode(key)) return refuse({ reason: 'invalid_country', code: key });
    const problem = urlProblem(url, own);
    if (problem) return refuse({ reason: 'invalid_url', field: `geo/${key}`, problem });
    out[key.toUpperCase()] = normalizeUrl(url);
  }
  return { ok: true, value: Object.keys(out).length > 0 ? out : null };
}

/** A/B variants (their count and each share already checked by the schema): shares summing to 100, URLs by the link rules. */
function checkTestVariants(variants: readonly { url: string; percent: number }[], own: OwnAddresses): LinkResult<{ value: { url: string; percent: number }[] }> {
  const total = variants.reduce((sum, v) => sum + v.percent, 0);
  if (total !== 100) return refuse({ reason: 'invalid_test_variants', total });
  const out: { url: string; percent: number }[] = [];
  for (const [index, { url, percent }] of variants.entries()) {
    const problem = urlProblem(url, own);
    if (problem) return refuse({ reason: 'invalid_url', field: `testVariants/${index}/url`, problem });
    out.push({ url: normalizeUrl(url), percent });
  }
  return { ok: true, value: out };
}

export interface UpdatedLink {
  row: LinkRow;
  scanLimitChanged: boolean;
}

/** A link with a scan limit that is still open. */
export interface LimitedLink {
  id: string;
  workspaceId: string;
  scanLimit: number;
}

export interface LinkStoreOptions {
  /** The service's base URLs (short links first, then the public API): a link may not point at them. */
  ownBaseUrls?: readonly string[];
  /** The root paths the service serves; without the server's (a process that serves no HTTP), at least the conventional root names. */
  reserved?: ReservedShortIds;
  /** How long setting a scan limit waits for the link's scans so far before it is refused (503); 2 s by default. */
  countTimeoutMs?: number;
  log?: Logger;
}

type Queryable = Pick<pg.PoolClient, 'query'>;

/** A new link's input as prepare() checked it, ready to insert. */
export interface PreparedLink {
  input: CreateLinkInput;
  passwordHash: string | null;
}

const INSERT_COLUMNS = `workspace_id, short_id, destination, ios_url, android_url, tags, pixels, expires_at, scan_limit, campaign_id, is_active,
  forward_query, click_id, expired_url, valid_from, geo, test_variants, domain_id, domain, title, description, image, password_hash, utm`;

/** A new link's values, in INSERT_COLUMNS order. */
function insertValues(workspaceId: string, shortId: string, domain: LinkDomainChoice, { input, passwordHash }: PreparedLink): unknown[] {
  return [
    workspaceId,
    shortId,
    input.destination,
    input.iosUrl ?? null,
    input.androidUrl ?? null,
    normalizeTags(input.tags ?? []),
    JSON.stringify(normalizePixels(input.pixels ?? [])),
    input.expiresAt ?? null,
    input.scanLimit ?? null,
    input.campaignId ?? null,
    input.isActive ?? true,
    input.forwardQuery ?? true,
    input.clickId ?? true,
    input.expiredUrl ?? null,
    input.validFrom ?? null,
    input.geo ? JSON.stringify(input.geo) : null,
    input.testVariants ? JSON.stringify(input.testVariants) : null,
    domain?.id ?? null,
    domain?.name ?? null,
    input.title ?? null,
    input.description ?? null,
    input.image ?? null,
    passwordHash,
    storedUtm(input.utm),
  ];
}

export class LinkStore {
  private readonly pg: Pool;
  /** Scan limits count the scans stored in ClickHouse. */
  private readonly lifetimeScans: LifetimeScans;
  private readonly options: LinkStoreOptions;
  private readonly own: OwnAddresses;
  private readonly reserved: ReservedShortIds;
  private readonly countTimeoutMs: number;
  private countFailedAt = 0;

  constructor(
    pg: Pool,
    lifetimeScans: LifetimeScans,
    options: LinkStoreOptions = {},
  ) {
    this.pg = pg;
    this.lifetimeScans = lifetimeScans;
    this.options = options;
    this.own = new OwnAddresses(options.ownBaseUrls ?? []);
    this.reserved = options.reserved ?? new ReservedPaths();
    this.countTimeoutMs = options.countTimeoutMs ?? 2000;
    this.baseHost = options.ownBaseUrls?.[0] ? hostOfUrl(options.ownBaseUrls[0]) : undefined;
  }

  /** The base domain's host name: a link given it as `domain` goes on the base domain (and a `domain` filter of it means links on no branded domain). */
  readonly baseHost: string | undefined;

  /** Hosts that also serve short links (verified branded domains): link URLs may not point at them either. */
  refuseUrlsOn(hosts: () => ReadonlySet<string>): void {
    this.own.alsoServedBy(hosts);
  }

  /** Why a URL may not be a destination (undefined: it may), as links' destinations are checked; for a branded domain's fallback URLs. */
  destinationProblem(value: string): string | undefined {
    return urlProblem(value, this.own);
  }

  /** Runs fn in a transaction. */
  tx<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return withTransaction(this.pg, fn);
  }

  /** Whether the campaign, if one is named, is the workspace's. */
  private async campaignFound(client: Queryable, workspaceId: string, campaignId: string | null | undefined): Promise<boolean> {
    if (!campaignId) return true;
    const found = await client.query('SELECT 1 FROM campaigns WHERE id = $1 AND workspace_id = $2', [campaignId, workspaceId]);
    return found.rowCount !== 0;
  }

  /**
   * The new link, for a writer whose input the rules cannot refuse (a test's direct write); a
   * refusal is a bug there. The entry points use tryCreate and answer its refusals.
   */
  async create(workspaceId: string, raw: CreateLinkInput): Promise<LinkRow> {
    const result = await this.tryCreate(workspaceId, raw);
    if (!result.ok) throw new Error(`link refused: ${result.refusal.reason}`);
    return result.row;
  }

  async tryCreate(workspaceId: string, raw: CreateLinkInput): Promise<LinkResult<{ row: LinkRow }>> {
    const prepared = await this.prepare(raw);
    if (!prepared.ok) return prepared;
    const { input } = prepared.link;
    return this.tx(async (client): Promise<LinkResult<{ row: LinkRow }>> => {
      if (!(await this.campaignFound(client, workspaceId, input.campaignId))) return refuse({ reason: 'campaign_not_found' });
      const domain: LinkDomainChoice | undefined = await domainOfLink(client, workspaceId, input.domain, this.baseHost);
      if (domain === undefined) return refuse({ reason: 'domain_not_found', domain: input.domain! });
      const [result] = await this.insertPrepared(client, workspaceId, domain, [prepared.link]);
      return result!;
    });
  }

  /**
   * A new link's input checked by the rules a JSON schema cannot express, in its stored form (the
   * first step of tryCreate, also of an import's rows); the schema has checked it already.
   */
  async prepare(raw: CreateLinkInput): Promise<LinkResult<{ link: PreparedLink }>> {
    const checked = checkFields(raw, this.own);
    if (!checked.ok) return checked;
    const input = checked.value;
    if (input.shortId && this.reserved.has(input.shortId)) return refuse({ reason: 'short_id_reserved', shortId: input.shortId });
    const passwordHash = input.password ? await hashPassword(input.password) : null;
    return { ok: true, link: { input, passwordHash } };
  }

  /**
   * Inserts prepared links on one domain in the caller's transaction, in one statement, each with
   * its changelog outbox row; answers one result per link, in order. A caller-chosen short ID that
   * is taken (or taken by an earlier link of the same call) is refused, never overwritten; an
   * assigned one is drawn again on the rare collision. The campaign a link names must have been
   * checked by the caller.
   */
  async insertPrepared(client: Queryable, workspaceId: string, domain: LinkDomainChoice, links: readonly PreparedLink[]): Promise<LinkResult<{ row: LinkRow }>[]> {
    const results: (LinkResult<{ row: LinkRow }> | undefined)[] = links.map(() => undefined);
    let pending = links.map((_, i) => i);
    // A caller-chosen ID is tried once; an assigned one is retried on the rare collision.
    for (let attempt = 0; attempt < 5 && pending.length > 0; attempt++) {
      const shortIds = pending.map((i) => links[i]!.input.shortId ?? assignShortId());
      const values: unknown[] = [];
      const tuples = pending.map((i, n) => {
        const row = insertValues(workspaceId, shortIds[n]!, domain, links[i]!);
        const at = values.length;
        values.push(...row);
        return `(${row.map((_, k) => `$${at + k + 1}`).join(', ')})`;
      });
      const inserted = await client.query<LinkRow>(`INSERT INTO links (${INSERT_COLUMNS}) VALUES ${tuples.join(', ')} ON CONFLICT (domain_id, short_id) DO NOTHING RETURNING *`, values);
      if (inserted.rows.length > 0) await client.query('INSERT INTO link_changelog_outbox (link_id) SELECT unnest($1::uuid[])', [inserted.rows.map((r) => r.id)]);
      const byShortId = new Map(inserted.rows.map((r) => [r.short_id, r]));
      const retry: number[] = [];
      pending.forEach((i, n) => {
        const row = byShortId.get(shortIds[n]!);
        // Two links of one call with the same ID: the first inserted takes it.
        if (row) byShortId.delete(shortIds[n]!);
        const chosen = links[i]!.input.shortId;
        if (row) results[i] = { ok: true, row };
        else if (chosen) results[i] = refuse({ reason: 'short_id_taken', shortId: chosen, ...(domain ? { domain: domain.name } : {}) });
        else retry.push(i);
      });
      pending = retry;
    }
    if (pending.length > 0) throw new Error('could not assign a free short ID');
    return results as LinkResult<{ row: LinkRow }>[];
  }

  async get(workspaceId: string, id: string): Promise<LinkRow | undefined> {
    if (!isUuid(id)) return undefined;
    const { rows } = await this.pg.query<LinkRow>('SELECT * FROM links WHERE id = $1 AND workspace_id = $2', [id, workspaceId]);
    return rows[0];
  }

  /** The updated link, and whether its scan limit changed (the same limit sent again is no change). */
  async update(workspaceId: string, id: string, raw: UpdateLinkInput): Promise<LinkResult<UpdatedLink>> {
    const checked = checkFields(raw, this.own);
    if (!checked.ok) return checked;
    const changes = checked.value;
    if (!isUuid(id)) return refuse({ reason: 'not_found' });
    // The limit counts scans over the link's whole life: a new limit above the scans so far
    // re-opens the link, one at or below them closes it now. They are counted before the
    // transaction (ClickHouse may be slow; no row lock is held meanwhile), after the checks
    // that would refuse the change anyway. The same limit again changes nothing and needs no count.
    const limit = changes.scanLimit;
    let scansSoFar = 0;
    let sameLimit = false;
    let campaignChecked = false;
    const passwordHash = changes.password ? await hashPassword(changes.password) : changes.password;
    if (typeof limit === 'number') {
      const current = await this.get(workspaceId, id);
      if (!current) return refuse({ reason: 'not_found' });
      sameLimit = current.scan_limit === limit;
      if (!sameLimit) {
        if (!(await this.campaignFound(this.pg, workspaceId, changes.campaignId))) return refuse({ reason: 'campaign_not_found' });
        campaignChecked = true;
        const counted = await this.countForLimit(current);
        if (counted === undefined) return refuse({ reason: 'scan_count_unavailable' });
        scansSoFar = counted;
      }
    }
    const row = await this.tx(async (client): Promise<LinkRow | LinkRefusal | undefined> => {
      if (!campaignChecked && !(await this.campaignFound(client, workspaceId, changes.campaignId))) return { reason: 'campaign_not_found' };
      if (changes.isActive === true) {
        // A link on a deleted domain stays deactivated: the domain no longer serves it.
        const gone = await client.query<{ name: string }>('SELECT d.name FROM links l JOIN link_domains d ON d.id = l.domain_id WHERE l.id = $1 AND d.deleted_at IS NOT NULL', [id]);
        if (gone.rows[0]) return { reason: 'domain_not_found', domain: gone.rows[0].name };
      }
      const sets: string[] = [];
      const values: unknown[] = [id, workspaceId];
      const set = (column: string, value: unknown) => {
        values.push(value);
        sets.push(`${column} = $${values.length}`);
      };
      if (changes.destination !== undefined) set('destination', changes.destination);
      if (changes.iosUrl !== undefined) set('ios_url', changes.iosUrl);
      if (changes.androidUrl !== undefined) set('android_url', changes.androidUrl);
      if (changes.tags !== undefined) set('tags', normalizeTags(changes.tags));
      if (changes.pixels !== undefined) set('pixels', JSON.stringify(normalizePixels(changes.pixels)));
      if (changes.expiresAt !== undefined) set('expires_at', changes.expiresAt);
      if (limit !== undefined) set('scan_limit', limit);
      if (limit !== undefined && !sameLimit) {
        sets.push(limit !== null && scansSoFar >= limit ? `exhausted_at = coalesce(exhausted_at, date_trunc('milliseconds', now()))` : 'exhausted_at = NULL');
      }
      if (changes.campaignId !== undefined) set('campaign_id', changes.campaignId);
      if (changes.isActive !== undefined) set('is_active', changes.isActive);
      if (changes.forwardQuery !== undefined) set('forward_query', changes.forwardQuery);
      if (changes.clickId !== undefined) set('click_id', changes.clickId);
      if (changes.expiredUrl !== undefined) set('expired_url', changes.expiredUrl);
      if (changes.validFrom !== undefined) set('valid_from', changes.validFrom);
      if (changes.geo !== undefined) set('geo', changes.geo === null ? null : JSON.stringify(changes.geo));
      if (changes.testVariants !== undefined) set('test_variants', changes.testVariants === null ? null : JSON.stringify(changes.testVariants));
      if (changes.title !== undefined) set('title', changes.title);
      if (changes.description !== undefined) set('description', changes.description);
      if (changes.image !== undefined) set('image', changes.image);
      if (passwordHash !== undefined) set('password_hash', passwordHash);
      if (changes.utm !== undefined) set('utm', storedUtm(changes.utm));
      const { rows } = await client.query<LinkRow>(
        `UPDATE links SET ${sets.join(', ')}, version = version + 1, updated_at = date_trunc('milliseconds', now())
          WHERE id = $1 AND workspace_id = $2 RETURNING *`,
        values,
      );
      const updated = rows[0];
      if (updated) await client.query('INSERT INTO link_changelog_outbox (link_id) VALUES ($1)', [updated.id]);
      return updated;
    }).catch((err: { code?: string; constraint?: string }): LinkRefusal => {
      // validFrom given alone may meet the stored expiry, and the reverse: the table's rule decides.
      if (err.code === '23514' && err.constraint === 'links_valid_from_before_expiry') return { reason: 'valid_from_after_expiry' };
      throw err;
    });
    if (!row) return refuse({ reason: 'not_found' });
    if ('reason' in row) return refuse(row);
    return { ok: true, row, scanLimitChanged: limit !== undefined && !sameLimit };
  }

  /**
   * The link's scans so far, or undefined when ClickHouse does not answer in time (the limit is
   * then refused and nothing changed). After a failed count, limits are refused at once for a
   * second, so a bulk request of many limits does not wait for each.
   */
  private async countForLimit(link: LinkRow): Promise<number | undefined> {
    if (Date.now() - this.countFailedAt < 1000) return undefined;
    try {
      return await this.lifetimeScans.of({ id: link.id, workspaceId: link.workspace_id }, this.countTimeoutMs);
    } catch (err) {
      this.countFailedAt = Date.now();
      this.options.log?.warn({ err, linkId: link.id }, 'scans of a link could not be counted; its scan limit is not changed');
      return undefined;
    }
  }

  /**
   * Counts again the scans of links whose new limit is committed: scans the sink stored between the
   * first count and the commit were held to the old limit (or none), so a link that reached its new
   * limit through them is closed here. Returns the links it closed, for the caller to publish. A
   * count that fails is tried again in the background for about six minutes (what it closes then is
   * published by the changelog's outbox relay).
   */
  async closeIfReached(workspaceId: string, ids: readonly string[], retry = 0): Promise<LinkRow[]> {
    if (ids.length === 0) return [];
    try {
      return await this.closeAtLimit(await this.lifetimeScans.count(ids.map((id) => ({ id, workspaceId })), this.countTimeoutMs));
    } catch (err) {
      this.options.log?.warn({ err, linkIds: ids, retry }, 'scans of links could not be counted again after their scan limit was set; trying again later');
      if (retry < 10) setTimeout(() => void this.closeIfReached(workspaceId, ids, retry + 1), 2000 * 2 ** Math.min(retry, 5)).unref();
      return [];
    }
  }

  /** Of these links, those with a scan limit that are still open. */
  async limitedOpen(ids: readonly string[]): Promise<LimitedLink[]> {
    // Distinct first: a sink's batch names the same few links thousands of times.
    const uuids = [...new Set(ids)].filter(isUuid);
    if (uuids.length === 0) return [];
    const { rows } = await this.pg.query<{ id: string; workspace_id: string; scan_limit: number }>(
      'SELECT id, workspace_id, scan_limit FROM links WHERE id = ANY($1::uuid[]) AND scan_limit IS NOT NULL AND exhausted_at IS NULL',
      [uuids],
    );
    return rows.map((r) => ({ id: r.id, workspaceId: r.workspace_id, scanLimit: r.scan_limit }));
  }

  /**
   * Closes the links whose scans so far (given) reached their limit, recording each in the changelog
   * outbox; returns the links it closed as they are now, for the caller to publish. Closing a closed
   * link changes nothing.
   */
  async closeAtLimit(scans: ReadonlyMap<string, number>): Promise<LinkRow[]> {
    if (scans.size === 0) return [];
    return this.tx(async (client) => {
      const { rows } = await client.query<LinkRow>(
        `UPDATE links l SET exhausted_at = date_trunc('milliseconds', now()), version = version + 1, updated_at = date_trunc('milliseconds', now())
           FROM unnest($1::uuid[], $2::bigint[]) AS t(id, scans)
          WHERE l.id = t.id AND l.scan_limit IS NOT NULL AND t.scans >= l.scan_limit AND l.exhausted_at IS NULL
         RETURNING l.*`,
        [[...scans.keys()], [...scans.values()]],
      );
      for (const { id } of rows) await client.query('INSERT INTO link_changelog_outbox (link_id) VALUES ($1)', [id]);
      return rows;
    });
  }

  /** Soft delete: the record is kept with isActive = false. Deleting a deleted link changes nothing. */
  async softDelete(workspaceId: string, id: string): Promise<LinkRow | undefined> {
    const current = await this.get(workspaceId, id);
    if (!current || !current.is_active) return current;
    // Nothing here can be refused but a link deleted meanwhile.
    const updated = await this.update(workspaceId, id, { isActive: false });
    return updated.ok ? updated.row : undefined;
  }

  async list(workspaceId: string, query: ListLinksQueryType): Promise<{ rows: LinkRow[]; nextCursor: string | null }> {
    const sort = query.sort ?? 'createdAt';
    const order = query.order ?? (sort === 'shortId' ? 'asc' : 'desc');
    const limit = query.limit ?? 20;
    // Short IDs sort by their bytes (COLLATE "C"), the same on every database whatever its locale.
    const column = { createdAt: 'created_at', updatedAt: 'updated_at', shortId: 'short_id COLLATE "C"' }[sort];
    const where = ['workspace_id = $1'];
    const values: unknown[] = [workspaceId];
    const param = (value: unknown) => {
      values.push(value);
      return `$${values.length}`;
    };
    if (query.q) {
      const like = `%${query.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      where.push(`((short_id || ' ' || destination) ILIKE ${param(like)} OR ${param(query.q.trim().toLowerCase())} = ANY (tags))`);
    }
    if (query.tag && query.tag.length > 0) where.push(`tags @> ${param(normalizeTags(query.tag))}::text[]`);
    if (query.campaignId) where.push(`campaign_id = ${param(query.campaignId)}`);
    if (query.shortId) where.push(`short_id = ${param(query.shortId)}`);
    if (query.domain) where.push(query.domain.toLowerCase() === this.baseHost ? 'domain IS NULL' : `domain = ${param(query.domain.toLowerCase())}`);
    if (query.isActive !== undefined) where.push(`is_active = ${param(query.isActive)}`);
    if (query.cursor) {
      const cursor = decodeCursor(query.cursor, sort, order);
      // Keyset pagination: rows strictly after the last one seen, in (sort column, id) order.
      const op = order === 'desc' ? '<' : '>';
      const value = sort === 'shortId' ? `${param(cursor.value)}::text COLLATE "C"` : `${param(cursor.value)}::timestamptz`;
      where.push(`(${column}, id) ${op} (${value}, ${param(cursor.id)}::uuid)`);
    }
    const { rows } = await this.pg.query<LinkRow>(
      `SELECT * FROM links WHERE ${where.join(' AND ')} ORDER BY ${column} ${order}, id ${order} LIMIT ${param(limit + 1)}`,
      values,
    );
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    const nextCursor =
      rows.length > limit && last
        ? encodeCursor({ sort, order, value: sort === 'shortId' ? last.short_id : (sort === 'createdAt' ? last.created_at : last.updated_at).toISOString(), id: last.id })
        : null;
    return { rows: page, nextCursor };
  }
}
