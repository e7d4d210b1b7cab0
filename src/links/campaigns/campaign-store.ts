// Campaigns in Postgres, listed newest first with their link counts. A change the
// store must refuse changes nothing and says why (CampaignRefusal); the entry points
// decide the answer (campaign-refusals.ts).
import type { Pool } from '../../platform/postgres/pool.ts';
import { decodeCursor, encodeCursor } from '../short-links/cursor.ts';
import { isUuid } from '../../platform/http/validation.ts';
import type { CampaignType, CreateCampaignInput, UpdateCampaignInput } from './campaign-schemas.ts';

interface Row {
  id: string;
  name: string;
  description: string | null;
  link_count: string;
  active_link_count: string;
  created_at: Date;
  updated_at: Date;
}

const toCampaign = (r: Row): CampaignType => ({
  id: r.id,
  name: r.name,
  description: r.description,
  linkCount: Number(r.link_count),
  activeLinkCount: Number(r.active_link_count),
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

const WITH_COUNTS = `
  SELECT c.*,
         (SELECT count(*) FROM links l WHERE l.campaign_id = c.id) AS link_count,
         (SELECT count(*) FROM links l WHERE l.campaign_id = c.id AND l.is_active) AS active_link_count
    FROM campaigns c`;

/** Why a campaign change was refused. */
export type CampaignRefusal = { reason: 'campaign_name_taken'; name: string };

/** A campaign change's result: the campaign, or why it was refused. */
export type CampaignResult<T> = { ok: true; campaign: T } | { ok: false; refusal: CampaignRefusal };

const nameTaken = (name: string): { ok: false; refusal: CampaignRefusal } => ({ ok: false, refusal: { reason: 'campaign_name_taken', name } });
const isUniqueViolation = (err: unknown): boolean => (err as { code?: string }).code === '23505';

export class CampaignStore {
  private readonly pg: Pool;

  constructor(pg: Pool) {
    this.pg = pg;
  }

  async create(workspaceId: string, input: CreateCampaignInput): Promise<CampaignResult<CampaignType>> {
    let id: string;
    try {
      const { rows } = await this.pg.query<{ id: string }>(
        'INSERT INTO campaigns (workspace_id, name, description) VALUES ($1, $2, $3) RETURNING id',
        [workspaceId, input.name.trim(), input.description ?? null],
      );
      id = rows[0]!.id;
    } catch (err) {
      if (isUniqueViolation(err)) return nameTaken(input.name);
      throw err;
    }
    return { ok: true, campaign: (await this.get(workspaceId, id))! };
  }

  async get(workspaceId: string, id: string): Promise<CampaignType | undefined> {
    if (!isUuid(id)) return undefined;
    const { rows } = await this.pg.query<Row>(`${WITH_COUNTS} WHERE c.id = $1 AND c.workspace_id = $2`, [id, workspaceId]);
    return rows[0] && toCampaign(rows[0]);
  }

  /** The campaign changed, undefined when the workspace has no such campaign, or the refusal. */
  async update(workspaceId: string, id: string, input: UpdateCampaignInput): Promise<CampaignResult<CampaignType | undefined>> {
    if (!isUuid(id)) return { ok: true, campaign: undefined };
    let rowCount: number | null;
    try {
      ({ rowCount } = await this.pg.query(
        `UPDATE campaigns SET name = coalesce($3, name), description = CASE WHEN $4 THEN $5 ELSE description END,
                updated_at = date_trunc('milliseconds', now())
          WHERE id = $1 AND workspace_id = $2`,
        [id, workspaceId, input.name?.trim() ?? null, input.description !== undefined, input.description ?? null],
      ));
    } catch (err) {
      if (isUniqueViolation(err)) return nameTaken(input.name ?? '');
      throw err;
    }
    return { ok: true, campaign: rowCount ? await this.get(workspaceId, id) : undefined };
  }

  async list(workspaceId: string, limit: number, cursorText?: string): Promise<{ data: CampaignType[]; nextCursor: string | null }> {
    const values: unknown[] = [workspaceId, limit + 1];
    let after = '';
    if (cursorText) {
      const cursor = decodeCursor(cursorText, 'createdAt', 'desc');
      values.push(cursor.value, cursor.id);
      after = 'AND (c.created_at, c.id) < ($3::timestamptz, $4::uuid)';
    }
    const { rows } = await this.pg.query<Row>(`${WITH_COUNTS} WHERE c.workspace_id = $1 ${after} ORDER BY c.created_at DESC, c.id DESC LIMIT $2`, values);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      data: page.map(toCampaign),
      nextCursor: rows.length > limit && last ? encodeCursor({ sort: 'createdAt', order: 'desc', value: last.created_at.toISOString(), id: last.id }) : null,
    };
  }
}
