// The contacts added to segments (Resend's segments are member lists; see
// segments.ts for how members and a filter combine). Both sides belong to one
// organization: callers find the contact and the segment in it first.
import type { Pool } from '../../platform/postgres/pool.ts';

export class SegmentMembers {
  private readonly pg: Pool;

  constructor(pg: Pool) {
    this.pg = pg;
  }

  /** Adds the contact (again: nothing changes). */
  async add(segmentId: string, contactId: string): Promise<void> {
    await this.pg.query('INSERT INTO mail_segment_members (segment_id, contact_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [segmentId, contactId]);
  }

  /** Removes the contact; whether it was a member. */
  async remove(segmentId: string, contactId: string): Promise<boolean> {
    const { rowCount } = await this.pg.query('DELETE FROM mail_segment_members WHERE segment_id = $1 AND contact_id = $2', [segmentId, contactId]);
    return (rowCount ?? 0) > 0;
  }

  /** The list query of the segments the contact was added to, for a page of them (rows are mail_segments rows). */
  segmentsOfQuery(organizationId: string, contactId: string): { select: string; params: unknown[] } {
    return {
      select: 'SELECT s.* FROM mail_segments s JOIN mail_segment_members m ON m.segment_id = s.id WHERE s.organization_id = $1 AND m.contact_id = $2',
      params: [organizationId, contactId],
    };
  }
}
