// Templates with versions. The newest version may be a draft, which edits change;
// publishing it makes it immutable, and the next edit opens a draft n+1 from it.
// A reference `{id or slug, version? integer | "latest"}` names a published version;
// one that names none is a TemplateRefusal, which the caller answers (template-refusals.ts).
import type { PoolClient } from 'pg';
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import { isUuid } from '../../platform/http/validation.ts';

export interface TemplateRow {
  id: string;
  organization_id: string;
  slug: string;
  name: string;
  created_at: Date;
  updated_at: Date;
}

export interface VersionRow {
  template_id: string;
  version: number;
  subject: string | null;
  html: string | null;
  text_body: string | null;
  /** Resend's fields of a template (null for templates made at /api/v1). */
  from_address: string | null;
  reply_to: string[] | null;
  variables: TemplateVariable[] | null;
  published_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** A variable a template declares (Resend's), with the value used when a send gives none. */
export interface TemplateVariable {
  key: string;
  type: 'string' | 'number';
  fallback_value: string | number | null;
}

export interface Content {
  subject?: string | null;
  html?: string | null;
  text?: string | null;
  from?: string | null;
  reply_to?: string[] | null;
  variables?: TemplateVariable[] | null;
}

/** The columns of a version's content, in the order contentValues gives them. */
const CONTENT_COLUMNS = 'subject, html, text_body, from_address, reply_to, variables';
const contentValues = (c: Content) => [c.subject ?? null, c.html ?? null, c.text ?? null, c.from ?? null, c.reply_to ?? null, c.variables ? JSON.stringify(c.variables) : null];

/** A published version, as a send or a broadcast uses it. */
export interface ResolvedTemplate {
  id: string;
  slug: string;
  version: number;
  subject: string;
  html: string | null;
  text: string | null;
  from: string | null;
  reply_to: string[] | null;
  variables: TemplateVariable[];
}

/** Why a reference names no published version. */
export type TemplateRefusal =
  | { reason: 'template_not_found' }
  /** `asked` is the version the reference named; `draft` when that version is a draft. */
  | { reason: 'template_version_not_published'; asked: number | 'latest'; draft: boolean };

export type TemplateResolution = { ok: true; template: ResolvedTemplate } | { ok: false; refusal: TemplateRefusal };

export interface TemplateRef {
  id?: string;
  slug?: string;
  version?: number | 'latest';
}


export class Templates {
  private readonly pg: Pool;

  constructor(pg: Pool) {
    this.pg = pg;
  }

  /** Creates the template with draft version 1; undefined when the slug is taken. */
  async create(organizationId: string, slug: string, name: string, content: Content): Promise<TemplateRow | undefined> {
    return this.transaction(async (db) => {
      const { rows } = await db.query<TemplateRow>('INSERT INTO mail_templates (organization_id, slug, name) VALUES ($1, $2, $3) ON CONFLICT (organization_id, slug) DO NOTHING RETURNING *', [organizationId, slug, name]);
      if (!rows[0]) return undefined;
      await db.query(`INSERT INTO mail_template_versions (template_id, version, ${CONTENT_COLUMNS}) VALUES ($1, 1, $2, $3, $4, $5, $6, $7)`, [rows[0].id, ...contentValues(content)]);
      return rows[0];
    });
  }

  /** By id or slug. */
  async find(organizationId: string, idOrSlug: string): Promise<TemplateRow | undefined> {
    const { rows } = await this.pg.query<TemplateRow>(`SELECT * FROM mail_templates WHERE organization_id = $1 AND ${isUuid(idOrSlug) ? 'id = $2::uuid' : 'slug = $2'}`, [organizationId, idOrSlug]);
    return rows[0];
  }

  async versions(templateId: string): Promise<VersionRow[]> {
    const { rows } = await this.pg.query<VersionRow>('SELECT * FROM mail_template_versions WHERE template_id = $1 ORDER BY version DESC', [templateId]);
    return rows;
  }

  async version(templateId: string, version: number): Promise<VersionRow | undefined> {
    const { rows } = await this.pg.query<VersionRow>('SELECT * FROM mail_template_versions WHERE template_id = $1 AND version = $2', [templateId, version]);
    return rows[0];
  }

  /** Changes the name, and the draft's content (opening a draft from the newest version if that one is published). */
  /**
   * Its name, slug (Resend's alias) and draft content changed in one transaction: all or nothing.
   * False, nothing changed, when the slug is another template's.
   */
  async update(template: TemplateRow, name: string | undefined, content: Content, slug?: string): Promise<boolean> {
    try {
      await this.updateAll(template, name, content, slug);
      return true;
    } catch (err) {
      if ((err as { code?: string }).code === '23505' && slug !== undefined) return false;
      throw err;
    }
  }

  private async updateAll(template: TemplateRow, name: string | undefined, content: Content, slug: string | undefined): Promise<void> {
    await this.transaction(async (db) => {
      await db.query('UPDATE mail_templates SET name = coalesce($2, name), slug = coalesce($3, slug), updated_at = now() WHERE id = $1', [template.id, name ?? null, slug ?? null]);
      if (Object.values(content).every((v) => v === undefined)) return;
      // The newest version, locked: edits and publications of one template take turns.
      const { rows } = await db.query<VersionRow>('SELECT * FROM mail_template_versions WHERE template_id = $1 ORDER BY version DESC LIMIT 1 FOR UPDATE', [template.id]);
      let draft = rows[0]!;
      if (draft.published_at) {
        const opened = await db.query<VersionRow>(
          `INSERT INTO mail_template_versions (template_id, version, ${CONTENT_COLUMNS}) SELECT template_id, $2, ${CONTENT_COLUMNS} FROM mail_template_versions WHERE template_id = $1 AND version = $3 RETURNING *`,
          [template.id, draft.version + 1, draft.version],
        );
        draft = opened.rows[0]!;
      }
      await db.query(
        `UPDATE mail_template_versions SET subject = CASE WHEN $3 THEN $4 ELSE subject END, html = CASE WHEN $5 THEN $6 ELSE html END,
                text_body = CASE WHEN $7 THEN $8 ELSE text_body END, from_address = CASE WHEN $9 THEN $10 ELSE from_address END,
                reply_to = CASE WHEN $11 THEN $12::text[] ELSE reply_to END, variables = CASE WHEN $13 THEN $14::jsonb ELSE variables END,
                updated_at = now() WHERE template_id = $1 AND version = $2`,
        [template.id, draft.version, content.subject !== undefined, content.subject ?? null, content.html !== undefined, content.html ?? null, content.text !== undefined, content.text ?? null,
          content.from !== undefined, content.from ?? null, content.reply_to !== undefined, content.reply_to ?? null, content.variables !== undefined, content.variables ? JSON.stringify(content.variables) : null],
      );
    });
  }

  /** Publishes the draft after `check` approves it; undefined when there is no draft. */
  async publish(template: TemplateRow, check: (draft: VersionRow) => void): Promise<VersionRow | undefined> {
    return this.transaction(async (db) => {
      const { rows } = await db.query<VersionRow>('SELECT * FROM mail_template_versions WHERE template_id = $1 ORDER BY version DESC LIMIT 1 FOR UPDATE', [template.id]);
      const draft = rows[0];
      if (!draft || draft.published_at) return undefined;
      check(draft);
      const { rows: published } = await db.query<VersionRow>('UPDATE mail_template_versions SET published_at = now() WHERE template_id = $1 AND version = $2 RETURNING *', [template.id, draft.version]);
      return published[0];
    });
  }

  /** A new template with the newest content of `template` as its draft version 1; undefined when the slug is taken. */
  async duplicate(template: TemplateRow, slug: string, name: string): Promise<TemplateRow | undefined> {
    return this.transaction(async (db) => {
      const { rows } = await db.query<TemplateRow>('INSERT INTO mail_templates (organization_id, slug, name) VALUES ($1, $2, $3) ON CONFLICT (organization_id, slug) DO NOTHING RETURNING *', [template.organization_id, slug, name]);
      if (!rows[0]) return undefined;
      await db.query(
        `INSERT INTO mail_template_versions (template_id, version, ${CONTENT_COLUMNS})
         SELECT $1, 1, ${CONTENT_COLUMNS} FROM mail_template_versions WHERE template_id = $2 ORDER BY version DESC LIMIT 1`,
        [rows[0].id, template.id],
      );
      return rows[0];
    });
  }

  async delete(template: TemplateRow): Promise<void> {
    await this.pg.query('DELETE FROM mail_templates WHERE id = $1', [template.id]);
  }

  listQuery(organizationId: string): { select: string; params: unknown[] } {
    return { select: 'SELECT * FROM mail_templates WHERE organization_id = $1', params: [organizationId] };
  }

  /** The published version a reference names, or a refusal saying why not. */
  async resolve(organizationId: string, ref: TemplateRef): Promise<TemplateResolution> {
    const template = ref.id ? (isUuid(ref.id) ? await this.find(organizationId, ref.id) : undefined) : ref.slug ? await this.find(organizationId, ref.slug) : undefined;
    if (!template) return { ok: false, refusal: { reason: 'template_not_found' } };
    const { rows } = await this.pg.query<VersionRow>(
      ref.version === undefined || ref.version === 'latest'
        ? 'SELECT * FROM mail_template_versions WHERE template_id = $1 AND published_at IS NOT NULL ORDER BY version DESC LIMIT 1'
        : 'SELECT * FROM mail_template_versions WHERE template_id = $1 AND version = $2',
      ref.version === undefined || ref.version === 'latest' ? [template.id] : [template.id, ref.version],
    );
    const version = rows[0];
    const asked = ref.version ?? 'latest';
    if (!version || !version.published_at) return { ok: false, refusal: { reason: 'template_version_not_published', asked, draft: version !== undefined } };
    return {
      ok: true,
      template: {
        id: template.id, slug: template.slug, version: version.version, subject: version.subject!, html: version.html, text: version.text_body,
        from: version.from_address, reply_to: version.reply_to, variables: version.variables ?? [],
      },
    };
  }

  private transaction<T>(work: (db: PoolClient) => Promise<T>): Promise<T> {
    return withTransaction(this.pg, work);
  }
}
