// Segments as stored: named filters over an organization's contacts
// (segment-filter.ts) and the contacts added to them (Resend's segments are such
// member lists: segment-members.ts), and the contacts a segment holds now. A
// segment's contacts are its members and the contacts its filter matches: a
// segment made at Resend's root paths has MEMBERS_ONLY, a filter that matches no
// contact, so it is its members alone; one made at /api/v1 has no members until
// contacts are added to it. The routes check a new filter before it is stored
// (segment-routes.ts).
import type { Pool } from '../../platform/postgres/pool.ts';
import { isUuid } from '../../platform/http/validation.ts';
import { page, type Page } from '../http/pagination.ts';
import type { ContactRow } from './contacts.ts';
import { compileSegmentFilter, parseSegmentFilter, type FilterError, type SegmentFilter } from './segment-filter.ts';

/** The filter of a segment that is a member list alone: every contact has an email, so none matches. */
export const MEMBERS_ONLY: SegmentFilter = { field: 'email', op: 'exists', value: false };

/** Whether contact `c` is a member of the segment whose id is the SQL expression `segmentId`. */
export const memberSql = (segmentId: string): string => `EXISTS (SELECT 1 FROM mail_segment_members sm WHERE sm.segment_id = ${segmentId} AND sm.contact_id = c.id)`;

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
    return { ok: true, page: await page(this.pg, { ...contactsOfSegmentQuery(segment, parsed.filter), ...request }, map) };
  }
}

/** The query of a segment's contacts (its members and those its already checked `filter` matches), for a page of them. */
export function contactsOfSegmentQuery(segment: SegmentRow, filter: SegmentFilter): { select: string; params: unknown[] } {
  const { sql, params } = compileSegmentFilter(filter, 3);
  return { select: `SELECT c.* FROM mail_contacts c WHERE c.organization_id = $1 AND (${memberSql('$2::uuid')} OR ${sql})`, params: [segment.organization_id, segment.id, ...params] };
}
