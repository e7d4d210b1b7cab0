// API keys: `lk_live_` followed by 32 random base62 characters. The key is shown
// once, at creation; only its SHA-256 hash is stored. Lookup is by hash (an index
// seek reveals nothing about the key), and the stored hash is compared in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Pool } from '../../platform/postgres/pool.ts';
import { newestFirst } from '../short-links/cursor.ts';
import type { Plan } from './plans.ts';
import { SCOPES, type Scope } from '../auth/scopes.ts';

export const API_KEY_PREFIX = 'lk_live_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PATTERN = /^lk_live_[0-9A-Za-z]{32}$/;

export interface ApiKeyInfo {
  id: string;
  workspaceId: string;
  name: string;
  /** First characters of the key, to tell keys apart; not enough to use it. */
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  scopes: Scope[];
}

export interface AuthenticatedKey {
  keyId: string;
  workspaceId: string;
  plan: Plan;
  scopes: Scope[];
}

interface Row {
  id: string;
  workspace_id: string;
  name: string;
  display_prefix: string;
  key_hash: Buffer;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  scopes: Scope[];
}

const toInfo = (r: Row): ApiKeyInfo => ({
  id: r.id,
  workspaceId: r.workspace_id,
  name: r.name,
  prefix: r.display_prefix,
  createdAt: r.created_at.toISOString(),
  lastUsedAt: r.last_used_at?.toISOString() ?? null,
  revokedAt: r.revoked_at?.toISOString() ?? null,
  scopes: r.scopes,
});

export function generateApiKey(): string {
  // Rejection sampling keeps every character uniformly distributed.
  let out = '';
  while (out.length < 32) {
    for (const byte of randomBytes(48)) {
      if (byte < 248 && out.length < 32) out += ALPHABET[byte % 62];
    }
  }
  return API_KEY_PREFIX + out;
}

export const hashApiKey = (key: string): Buffer => createHash('sha256').update(key, 'utf8').digest();

export class ApiKeys {
  private readonly pg: Pool;

  constructor(pg: Pool) {
    this.pg = pg;
  }

  /**
   * Issues a key with these scopes (every scope when none are named); the returned `key` is the
   * only time the secret exists outside the caller.
   */
  async create(workspaceId: string, name: string, scopes?: readonly Scope[]): Promise<{ key: string; info: ApiKeyInfo }> {
    const key = generateApiKey();
    const { rows } = await this.pg.query<Row>(
      `INSERT INTO api_keys (workspace_id, name, display_prefix, key_hash, scopes)
       VALUES ($1, $2, $3, $4, $5) RETURNING *`,
      [workspaceId, name, key.slice(0, API_KEY_PREFIX.length + 4), hashApiKey(key), [...new Set(scopes ?? SCOPES)]],
    );
    return { key, info: toInfo(rows[0]!) };
  }

  /** A page of the workspace's keys, newest first; `cursor` is the previous page's nextCursor. */
  async list(workspaceId: string, limit: number, cursor?: string): Promise<{ data: ApiKeyInfo[]; nextCursor: string | null }> {
    const { rows, nextCursor } = await newestFirst<Row>(this.pg, 'SELECT * FROM api_keys WHERE workspace_id = $1', [workspaceId], limit, cursor);
    return { data: rows.map(toInfo), nextCursor };
  }

  /** Revokes a key of the workspace (the operator's way); returns undefined when there is no such key. */
  async revoke(workspaceId: string, keyId: string): Promise<ApiKeyInfo | undefined> {
    const { rows } = await this.pg.query<Row>(
      'UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE workspace_id = $1 AND id = $2 RETURNING *',
      [workspaceId, keyId],
    );
    return rows[0] && toInfo(rows[0]);
  }

  /**
   * Revokes a key of the workspace whose scopes are all among `held` (the calling key's), so a key
   * never revokes a wider one. Returns the key, `{ missing }` (the first scope it holds beyond
   * `held`; the key is left as it was) or undefined when there is no such key. A key's scopes never
   * change, so the look-up after a refused update names what refused it.
   */
  async revokeWithin(workspaceId: string, keyId: string, held: ReadonlySet<Scope>): Promise<ApiKeyInfo | { missing: Scope } | undefined> {
    const { rows } = await this.pg.query<Row>(
      'UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE workspace_id = $1 AND id = $2 AND scopes <@ $3::text[] RETURNING *',
      [workspaceId, keyId, [...held]],
    );
    if (rows[0]) return toInfo(rows[0]);
    const target = await this.pg.query<{ scopes: Scope[] }>('SELECT scopes FROM api_keys WHERE workspace_id = $1 AND id = $2', [workspaceId, keyId]);
    const missing = SCOPES.find((s) => target.rows[0]?.scopes.includes(s) && !held.has(s));
    return missing && { missing };
  }

  /** The workspace of a valid, unrevoked key, or undefined. */
  async authenticate(key: string): Promise<AuthenticatedKey | undefined> {
    if (!KEY_PATTERN.test(key)) return undefined;
    const hash = hashApiKey(key);
    const { rows } = await this.pg.query<{ id: string; workspace_id: string; key_hash: Buffer; plan: Plan; last_used_at: Date | null; scopes: Scope[] }>(
      `SELECT k.id, k.workspace_id, k.key_hash, k.last_used_at, k.scopes, w.plan
         FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
      [hash],
    );
    const row = rows[0];
    if (!row || !timingSafeEqual(row.key_hash, hash)) return undefined;
    // last_used_at at minute precision: one write per key per minute at most.
    if (!row.last_used_at || Date.now() - row.last_used_at.getTime() > 60_000) {
      void this.pg.query('UPDATE api_keys SET last_used_at = now() WHERE id = $1', [row.id]).catch(() => {});
    }
    return { keyId: row.id, workspaceId: row.workspace_id, plan: row.plan, scopes: row.scopes };
  }
}
