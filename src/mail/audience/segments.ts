// Segments as stored: named filters over an organization's contacts
// (segment-filter.ts), and the contacts a segment matches now. The routes check a
// new filter before it is stored (segment-routes.ts).
import type { Pool } from '../../platform/postgres/pool.ts';
import { isUuid } from '../../platform/http/validation.ts';
import { page, type Page } from '../http/pagination.ts';
import type { ContactRow } from './contacts.ts';
import { compileSegmentFilter, parseSegmentFilter, type FilterError, type SegmentFilter } from './segment-filter.ts';

export interface SegmentRow {
  id: string;
  organization_id: string;
  name: string;
  filter: SegmentFilter;
  created_at: Date;
  updated_at: Date;
}

export const toSegment = (r: SegmentRow) => ({ object: 'segment' as const, id: r.id, name: r.name, filter: r.filter, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() });

/** A page of a segment's contacts, or why its stored filter cannot be run (stored before today's checks). */
export type SegmentContacts<T> = { ok: true; page: Page<T> } | { ok: false; reason: 'filter_invalid'; errors: FilterError[] };

export class Segments {
  private readonly pg: Pool;

  constructor(pg: Pool) {
    this.pg = pg;
  }

  async create(organizationId: string, name: string, filter: SegmentFilter): Promise<SegmentRow> {
    const { rows } = await this.pg.query<SegmentRow>('INSERT INTO mail_segments (organization_id, name, filter) VALUES ($1, $2, $3) RETURNING *', [organizationId, name, JSON.stringify(filter)]);
    return rows[0]!;
  }

  /** The organization's segment; undefined for none (an id that is not a UUID names none). */
  async get(organizationId: string, id: string): Promise<SegmentRow | undefined> {
    if (!isUuid(id)) return undefined;
    const { rows } = await this.pg.query<SegmentRow>('SELECT * FROM mail_segments WHERE organization_id = $1 AND id = $2', [organizationId, id]);
    return rows[0];
  }

  /** A page of the organization's segments, newest first. */
  list<T>(organizationId: string, request: { limit?: number; cursor?: string }, map: (row: SegmentRow) => T): Promise<Page<T>> {
    return page(this.pg, { select: 'SELECT * FROM mail_segments WHERE organization_id = $1', params: [organizationId], ...request }, map);
  }

  /** The segment with its name or filter changed (a filter already checked). */
  async update(id: string, change: { name?: string; filter?: SegmentFilter }): Promise<SegmentRow> {
    const { rows } = await this.pg.query<SegmentRow>(
      'UPDATE mail_segments SET name = coalesce($2, name), filter = coalesce($3::jsonb, filter), updated_at = now() WHERE id = $1 RETURNING *',
      [id, change.name ?? null, change.filter === undefined ? null : JSON.stringify(change.filter)],
    );
    return rows[0]!;
  }

  async delete(id: string): Promise<void> {
    await this.pg.query('DELETE FROM mail_segments WHERE id = $1', [id]);
  }

  /** A page of the contacts the segment matches now, newest first. */
  async contacts<T>(segment: SegmentRow, request: { limit?: number; cursor?: string }, map: (row: ContactRow) => T): Promise<SegmentContacts<T>> {
    // A filter stored before today's checks may hold a value Postgres refuses.
    const parsed = parseSegmentFilter(segment.filter);
    if (!parsed.ok) return { ok: false, reason: 'filter_invalid', errors: parsed.errors };
    const { sql, params } = compileSegmentFilter(parsed.filter, 2);
    return { ok: true, page: await page(this.pg, { select: `SELECT c.* FROM mail_contacts c WHERE c.organization_id = $1 AND ${sql}`, params: [segment.organization_id, ...params], ...request }, map) };
  }
}
