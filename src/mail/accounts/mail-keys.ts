// Mail API keys: `mk_live_` followed by 32 random base62 characters, shown once
// at creation and stored only as their SHA-256 hash (looked up by hash, compared
// in constant time), as the link product's keys. A key has a kind (full, send,
// test; see auth/permissions.ts), optionally a list of domains it is restricted
// to, and optionally its own per-second request cap.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Pool } from '../../platform/postgres/pool.ts';
import { page, type Page } from '../http/pagination.ts';
import { ShortLivedCache } from '../../platform/short-lived-cache.ts';

export const MAIL_KEY_PREFIX = 'mk_live_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PATTERN = /^mk_live_[0-9A-Za-z]{32}$/;

export const KEY_KINDS = ['full', 'send', 'test'] as const;
export type KeyKind = (typeof KEY_KINDS)[number];

export interface MailKeyInfo {
  object: 'api_key';
  id: string;
  organization_id: string;
  name: string;
  kind: KeyKind;
  /** null: every domain of the organization. */
  domains: string[] | null;
  /** null: the platform default per second. */
  rate_limit: number | null;
  /** First characters of the key, to tell keys apart; not enough to use it. */
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** Who a mail request speaks for, as its key allows. */
export interface MailKeyGrant {
  keyId: string;
  organizationId: string;
  kind: KeyKind;
  domains: string[] | null;
  rateLimit: number | null;
}

export interface NewMailKey {
  name: string;
  kind: KeyKind;
  domains?: string[];
  rate_limit?: number;
}

export interface MailKeyRow {
  id: string;
  organization_id: string;
  name: string;
  kind: KeyKind;
  domains: string[] | null;
  rate_limit: number | null;
  display_prefix: string;
  key_hash: Buffer;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export const toMailKeyInfo = (r: MailKeyRow): MailKeyInfo => ({
  object: 'api_key',
  id: r.id,
  organization_id: r.organization_id,
  name: r.name,
  kind: r.kind,
  domains: r.domains,
  rate_limit: r.rate_limit,
  prefix: r.display_prefix,
  created_at: r.created_at.toISOString(),
  last_used_at: r.last_used_at?.toISOString() ?? null,
  revoked_at: r.revoked_at?.toISOString() ?? null,
});

function generateMailKey(): string {
  // Rejection sampling keeps every character uniformly distributed.
  let out = '';
  while (out.length < 32) {
    for (const byte of randomBytes(48)) if (byte < 248 && out.length < 32) out += ALPHABET[byte % 62];
  }
  return MAIL_KEY_PREFIX + out;
}

const hashKey = (key: string): Buffer => createHash('sha256').update(key, 'utf8').digest();

/**
 * $2 is a restricted key's domains (or null: any key): such a key reaches only keys restricted to
 * some of its domains, never an unrestricted key or one of another domain, so it cannot revoke or
 * rename its way past its own reach.
 */
const WITHIN_SCOPE = '($2::text[] IS NULL OR (domains IS NOT NULL AND domains <@ $2::text[]))';

export class MailKeys {
  private readonly pg: Pool;
  /** What a key hash granted a moment ago: a revocation reaches other processes within `cacheMs`, this one at once. */
  private readonly recent: ShortLivedCache<MailKeyGrant | undefined>;

  constructor(pg: Pool, cacheMs = 0) {
    this.pg = pg;
    this.recent = new ShortLivedCache(cacheMs, 100_000);
  }

  /** Issues a key; the returned `key` is the only time the secret exists outside the caller. */
  async create(organizationId: string, spec: NewMailKey): Promise<{ key: string; info: MailKeyInfo }> {
    const key = generateMailKey();
    const domains = spec.domains ? [...new Set(spec.domains.map((d) => d.toLowerCase()))] : null;
    const { rows } = await this.pg.query<MailKeyRow>(
      `INSERT INTO mail_api_keys (organization_id, name, kind, domains, rate_limit, display_prefix, key_hash)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [organizationId, spec.name, spec.kind, domains, spec.rate_limit ?? null, key.slice(0, MAIL_KEY_PREFIX.length + 4), hashKey(key)],
    );
    return { key, info: toMailKeyInfo(rows[0]!) };
  }

  /** A page of the organization's keys, newest first (pagination.ts). */
  async list(organizationId: string, limit?: number, cursor?: string): Promise<Page<MailKeyInfo>> {
    return page(this.pg, { select: 'SELECT * FROM mail_api_keys WHERE organization_id = $1', params: [organizationId], limit, cursor }, toMailKeyInfo);
  }

  /**
   * The list query of the organization's keys in use (not revoked), for a page of them; rows map with toMailKeyInfo.
   * `scope`: the domains of a restricted key asking, which sees only keys restricted within them (null: all).
   */
  activeListQuery(organizationId: string, scope: string[] | null): { select: string; params: unknown[] } {
    return { select: `SELECT * FROM mail_api_keys WHERE organization_id = $1 AND revoked_at IS NULL AND ${WITHIN_SCOPE}`, params: [organizationId, scope] };
  }

  /** Renames a key in use within `scope` (see activeListQuery); undefined when the organization has no such key. */
  async rename(organizationId: string, keyId: string, name: string, scope: string[] | null): Promise<MailKeyInfo | undefined> {
    const { rows } = await this.pg.query<MailKeyRow>(`UPDATE mail_api_keys SET name = $3 WHERE organization_id = $1 AND ${WITHIN_SCOPE} AND id = $4 AND revoked_at IS NULL RETURNING *`, [organizationId, scope, name, keyId]);
    return rows[0] && toMailKeyInfo(rows[0]);
  }

  /** Revokes a key in use within `scope` (Resend's remove); undefined when the organization has no such key in use. */
  async revokeInUse(organizationId: string, keyId: string, scope: string[] | null): Promise<MailKeyInfo | undefined> {
    const { rows } = await this.pg.query<MailKeyRow>(`UPDATE mail_api_keys SET revoked_at = now() WHERE organization_id = $1 AND ${WITHIN_SCOPE} AND id = $3 AND revoked_at IS NULL RETURNING *`, [organizationId, scope, keyId]);
    if (rows[0]) this.recent.delete(rows[0].key_hash.toString('hex'));
    return rows[0] && toMailKeyInfo(rows[0]);
  }

  /** Revokes a key of the organization; undefined when there is no such key. */
  async revoke(organizationId: string, keyId: string): Promise<MailKeyInfo | undefined> {
    const { rows } = await this.pg.query<MailKeyRow>(
      'UPDATE mail_api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE organization_id = $1 AND id = $2 RETURNING *',
      [organizationId, keyId],
    );
    if (rows[0]) this.recent.delete(rows[0].key_hash.toString('hex'));
    return rows[0] && toMailKeyInfo(rows[0]);
  }

  /** What a valid, unrevoked key grants, or undefined. */
  async authenticate(key: string): Promise<MailKeyGrant | undefined> {
    if (!KEY_PATTERN.test(key)) return undefined;
    const hash = hashKey(key);
    return this.recent.get(hash.toString('hex'), () => this.lookup(hash));
  }

  private async lookup(hash: Buffer): Promise<MailKeyGrant | undefined> {
    const { rows } = await this.pg.query<MailKeyRow>('SELECT * FROM mail_api_keys WHERE key_hash = $1 AND revoked_at IS NULL', [hash]);
    const row = rows[0];
    if (!row || !timingSafeEqual(row.key_hash, hash)) return undefined;
    // last_used_at at minute precision: one write per key per minute at most.
    if (!row.last_used_at || Date.now() - row.last_used_at.getTime() > 60_000) {
      void this.pg.query('UPDATE mail_api_keys SET last_used_at = now() WHERE id = $1', [row.id]).catch(() => {});
    }
    return { keyId: row.id, organizationId: row.organization_id, kind: row.kind, domains: row.domains, rateLimit: row.rate_limit };
  }
}
