// Shares of a link's analytics (migrations/postgres/040): the public page
// /analytics/<id> shows that link's analytics to whoever has the URL (and the
// password, when it has one) until the share expires or is revoked. The id is the
// capability, so it is long and random; the password is stored as a link's is
// (scrypt, link-password.ts), never answered.
import { randomBytes } from 'node:crypto';
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import { isUuid } from '../../platform/http/validation.ts';
import { canUseApi, type Plan } from '../workspaces/plans.ts';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const SHARE_ID_PATTERN = /^sh_[0-9A-Za-z]{24}$/;
/** Unrevoked, unexpired shares a link may have at once. */
export const LIVE_SHARES_PER_LINK = 25;
/** The newest shares of a link a listing answers (revoked and expired ones too). */
export const LISTED_SHARES = 100;

/** sh_ and 24 base62 characters (about 142 random bits), each uniformly drawn. */
export function newShareId(): string {
  let out = '';
  while (out.length < 24) {
    for (const byte of randomBytes(32)) {
      if (byte < 248 && out.length < 24) out += ALPHABET[byte % 62];
    }
  }
  return `sh_${out}`;
}

export interface ShareRow {
  id: string;
  workspace_id: string;
  link_id: string;
  password_hash: string | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
}

/** A live share with what its page shows of the link. */
export interface OpenShare {
  share: ShareRow;
  link: { id: string; shortId: string; domain: string | null; destination: string; title: string | null };
}

export type CreateShareResult = { ok: true; share: ShareRow } | { ok: false; reason: 'not_found' | 'too_many_shares' };

export class ShareStore {
  private readonly pg: Pool;

  constructor(pg: Pool) {
    this.pg = pg;
  }

  /** A share of a link of the workspace; refused when the link is not the workspace's or has its fill of live shares. */
  async create(workspaceId: string, linkId: string, fields: { expiresAt: Date | null; passwordHash: string | null }): Promise<CreateShareResult> {
    if (!isUuid(linkId)) return { ok: false, reason: 'not_found' };
    return withTransaction(this.pg, async (db): Promise<CreateShareResult> => {
      // The link's row is locked while its live shares are counted, so two creations cannot both pass the bound.
      const link = await db.query('SELECT id FROM links WHERE id = $1 AND workspace_id = $2 FOR UPDATE', [linkId, workspaceId]);
      if (link.rowCount === 0) return { ok: false, reason: 'not_found' };
      const live = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM link_analytics_shares WHERE link_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())',
        [linkId],
      );
      if (live.rows[0]!.n >= LIVE_SHARES_PER_LINK) return { ok: false, reason: 'too_many_shares' };
      const { rows } = await db.query<ShareRow>(
        'INSERT INTO link_analytics_shares (id, workspace_id, link_id, password_hash, expires_at) VALUES ($1, $2, $3, $4, $5) RETURNING *',
        [newShareId(), workspaceId, linkId, fields.passwordHash, fields.expiresAt],
      );
      return { ok: true, share: rows[0]! };
    });
  }

  /** The link's newest shares (revoked and expired too), or undefined when the link is not the workspace's. */
  async list(workspaceId: string, linkId: string): Promise<ShareRow[] | undefined> {
    if (!isUuid(linkId)) return undefined;
    const link = await this.pg.query('SELECT 1 FROM links WHERE id = $1 AND workspace_id = $2', [linkId, workspaceId]);
    if (link.rowCount === 0) return undefined;
    const { rows } = await this.pg.query<ShareRow>(
      'SELECT * FROM link_analytics_shares WHERE workspace_id = $1 AND link_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3',
      [workspaceId, linkId, LISTED_SHARES],
    );
    return rows;
  }

  /** Revokes a share of the link (again: nothing changes); undefined when there is no such share. */
  async revoke(workspaceId: string, linkId: string, shareId: string): Promise<ShareRow | undefined> {
    if (!isUuid(linkId) || !SHARE_ID_PATTERN.test(shareId)) return undefined;
    const { rows } = await this.pg.query<ShareRow>(
      'UPDATE link_analytics_shares SET revoked_at = coalesce(revoked_at, now()) WHERE workspace_id = $1 AND link_id = $2 AND id = $3 RETURNING *',
      [workspaceId, linkId, shareId],
    );
    return rows[0];
  }

  /**
   * The share behind a page, with its link, while it is neither revoked nor expired, its link is
   * not deleted (DELETE /links/:id is a soft delete: deactivated, and a deactivated link is the
   * same row, so its shares answer 404 until it is reactivated), and its workspace's plan has the
   * API (the rule the workspace page's sessions and the API's streams follow: canUseApi).
   */
  async open(shareId: string): Promise<OpenShare | undefined> {
    if (!SHARE_ID_PATTERN.test(shareId)) return undefined;
    const { rows } = await this.pg.query<ShareRow & { short_id: string; domain: string | null; destination: string; title: string | null; plan: Plan }>(
      `SELECT s.*, l.short_id, l.domain, l.destination, l.title, w.plan
         FROM link_analytics_shares s JOIN links l ON l.id = s.link_id JOIN workspaces w ON w.id = s.workspace_id
        WHERE s.id = $1 AND s.revoked_at IS NULL AND (s.expires_at IS NULL OR s.expires_at > now()) AND l.is_active`,
      [shareId],
    );
    const r = rows[0];
    if (!r || !canUseApi(r.plan)) return undefined;
    const { short_id, domain, destination, title, plan: _plan, ...share } = r;
    return { share, link: { id: share.link_id, shortId: short_id, domain, destination, title } };
  }
}
