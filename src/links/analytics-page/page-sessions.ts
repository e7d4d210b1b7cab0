// Who may see an analytics page without giving a credential on each request
// (migrations/postgres/040): a share's password given once (a cookie scoped to
// that share's path), or a workspace key given once (the sign-in form's cookie,
// or a page token in the URL). The secret is 32 random bytes; only its SHA-256 is
// stored. Every request checks the session against what it stands on: its share
// still live, its key unrevoked, holding analytics:read, on a plan with the API.
import { createHash, randomBytes } from 'node:crypto';
import type { Pool } from '../../platform/postgres/pool.ts';
import { canUseApi, type Plan } from '../workspaces/plans.ts';

/** How long a session lasts at most (a page token may ask for less or, up to MAX_TOKEN_MS, more). */
export const SESSION_MS = 12 * 3_600_000;
export const MAX_TOKEN_MS = 30 * 86_400_000;
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

const hashOf = (token: string) => createHash('sha256').update(token, 'utf8').digest();

export type PageSession = { workspaceId: string; shareId: string; keyId?: undefined } | { workspaceId: string; keyId: string; shareId?: undefined };

export class PageSessions {
  private readonly pg: Pool;

  constructor(pg: Pool) {
    this.pg = pg;
  }

  /** A new session; its secret is returned once. Sessions expired a day ago are cleared on the way. */
  async create(owner: PageSession, expiresAt: Date): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.pg.query("DELETE FROM link_analytics_sessions WHERE expires_at < now() - interval '1 day'");
    await this.pg.query(
      'INSERT INTO link_analytics_sessions (token_hash, workspace_id, share_id, key_id, expires_at) VALUES ($1, $2, $3, $4, $5)',
      [hashOf(token), owner.workspaceId, owner.shareId ?? null, owner.keyId ?? null, expiresAt],
    );
    return token;
  }

  /** Whether the token is a live session of this share. */
  async forShare(token: string | undefined, shareId: string): Promise<boolean> {
    if (!token || !TOKEN_PATTERN.test(token)) return false;
    const { rowCount } = await this.pg.query(
      `SELECT 1 FROM link_analytics_sessions x JOIN link_analytics_shares s ON s.id = x.share_id
        WHERE x.token_hash = $1 AND x.share_id = $2 AND x.expires_at > now()
          AND s.revoked_at IS NULL AND (s.expires_at IS NULL OR s.expires_at > now())`,
      [hashOf(token), shareId],
    );
    return rowCount === 1;
  }

  /** The workspace and key of a live key session, or undefined. */
  async forWorkspace(token: string | undefined): Promise<{ workspaceId: string; keyId: string; expiresAt: Date } | undefined> {
    if (!token || !TOKEN_PATTERN.test(token)) return undefined;
    const { rows } = await this.pg.query<{ workspace_id: string; key_id: string; expires_at: Date; plan: Plan }>(
      `SELECT x.workspace_id, x.key_id, x.expires_at, w.plan
         FROM link_analytics_sessions x JOIN api_keys k ON k.id = x.key_id JOIN workspaces w ON w.id = x.workspace_id
        WHERE x.token_hash = $1 AND x.expires_at > now() AND k.revoked_at IS NULL AND 'analytics:read' = ANY (k.scopes)`,
      [hashOf(token)],
    );
    const r = rows[0];
    if (!r || !canUseApi(r.plan)) return undefined;
    return { workspaceId: r.workspace_id, keyId: r.key_id, expiresAt: r.expires_at };
  }

  /** Ends a session (sign-out). */
  async end(token: string): Promise<void> {
    if (TOKEN_PATTERN.test(token)) await this.pg.query('DELETE FROM link_analytics_sessions WHERE token_hash = $1', [hashOf(token)]);
  }
}
