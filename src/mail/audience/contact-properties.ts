// Contact properties an organization declares (Resend's contact-properties): a
// key, its type (string or number) and the value used where a contact has none
// (rendering `{{{KEY}}}`, and Resend's contact answers). Contacts may still hold
// undeclared properties, as /api/v1 takes them; a declared key's value must have
// its type, on every face that writes contacts (declaredTypeProblem).
import { ApiError } from '../../platform/http/errors.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { PropertyValue } from './contact-fields.ts';

export const PROPERTY_TYPES = ['string', 'number'] as const;
export type PropertyType = (typeof PROPERTY_TYPES)[number];

export interface ContactPropertyRow {
  id: string;
  organization_id: string;
  key: string;
  type: PropertyType;
  fallback_value: string | number | null;
  created_at: Date;
}

export const toContactProperty = (r: ContactPropertyRow) => ({
  object: 'contact_property' as const,
  id: r.id,
  key: r.key,
  type: r.type,
  fallback_value: r.fallback_value,
  created_at: r.created_at.toISOString(),
});

/** The first given property whose value is not of its declared type (null is never refused), or undefined. */
export function declaredTypeProblem(properties: Record<string, PropertyValue>, declared: Map<string, ContactPropertyRow>): { key: string; type: PropertyType } | undefined {
  for (const [key, value] of Object.entries(properties)) {
    const p = declared.get(key);
    if (p && value !== null && typeof value !== p.type) return { key, type: p.type };
  }
  return undefined;
}

/** 422 invalid_property_type when a declared property gets a value of another type. */
export function checkDeclaredTypes(properties: Record<string, PropertyValue>, declared: Map<string, ContactPropertyRow>): void {
  const problem = declaredTypeProblem(properties, declared);
  if (problem) {
    throw new ApiError(422, 'invalid_property_type', `Property ${problem.key} is declared as a ${problem.type}.`, [{ path: `/properties/${problem.key}`, message: `must be a ${problem.type}` }]);
  }
}

export class ContactProperties {
  private readonly pg: Pool;

  constructor(pg: Pool) {
    this.pg = pg;
  }

  /** Declares a property; undefined when the organization has the key. */
  async create(organizationId: string, p: { key: string; type: PropertyType; fallback_value: string | number | null }): Promise<ContactPropertyRow | undefined> {
    const { rows } = await this.pg.query<ContactPropertyRow>(
      'INSERT INTO mail_contact_properties (organization_id, key, type, fallback_value) VALUES ($1, $2, $3, $4::jsonb) ON CONFLICT (organization_id, key) DO NOTHING RETURNING *',
      [organizationId, p.key, p.type, JSON.stringify(p.fallback_value)],
    );
    return rows[0];
  }

  async get(organizationId: string, id: string): Promise<ContactPropertyRow | undefined> {
    const { rows } = await this.pg.query<ContactPropertyRow>('SELECT * FROM mail_contact_properties WHERE organization_id = $1 AND id = $2', [organizationId, id]);
    return rows[0];
  }

  /** Every declared property of the organization, by key. */
  async all(organizationId: string): Promise<Map<string, ContactPropertyRow>> {
    const { rows } = await this.pg.query<ContactPropertyRow>('SELECT * FROM mail_contact_properties WHERE organization_id = $1', [organizationId]);
    return new Map(rows.map((r) => [r.key, r]));
  }

  listQuery(organizationId: string): { select: string; params: unknown[] } {
    return { select: 'SELECT * FROM mail_contact_properties WHERE organization_id = $1', params: [organizationId] };
  }

  async setFallback(organizationId: string, id: string, fallback: string | number | null): Promise<ContactPropertyRow | undefined> {
    const { rows } = await this.pg.query<ContactPropertyRow>('UPDATE mail_contact_properties SET fallback_value = $3::jsonb WHERE organization_id = $1 AND id = $2 RETURNING *', [organizationId, id, JSON.stringify(fallback)]);
    return rows[0];
  }

  async delete(organizationId: string, id: string): Promise<ContactPropertyRow | undefined> {
    const { rows } = await this.pg.query<ContactPropertyRow>('DELETE FROM mail_contact_properties WHERE organization_id = $1 AND id = $2 RETURNING *', [organizationId, id]);
    return rows[0];
  }
}
