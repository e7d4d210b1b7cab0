// A template in Resend's shape: its newest content (the draft when there is one),
// `alias` for our slug, `status` published once a version is, and the time of
// the newest publication. `current_version_id` names the newest version as
// "<template id>:<version>".
import type { TemplateRow, VersionRow } from './templates.ts';

export function toResendTemplate(t: TemplateRow, versions: VersionRow[]) {
  const newest = versions[0]!;
  const published = versions.find((v) => v.published_at);
  const variables = newest.variables?.map((v) => ({ ...v, created_at: newest.created_at.toISOString(), updated_at: newest.updated_at.toISOString() })) ?? null;
  return {
    object: 'template' as const,
    id: t.id,
    name: t.name,
    alias: t.slug,
    status: published ? 'published' as const : 'draft' as const,
    subject: newest.subject,
    html: newest.html ?? '',
    text: newest.text_body,
    from: newest.from_address,
    reply_to: newest.reply_to,
    variables,
    published_at: published?.published_at?.toISOString() ?? null,
    created_at: t.created_at.toISOString(),
    updated_at: t.updated_at.toISOString(),
    has_unpublished_versions: newest.published_at === null && published !== undefined,
    current_version_id: `${t.id}:${newest.version}`,
  };
}

/** A list item: what the list query adds to the template row. */
export interface TemplateListRow extends TemplateRow {
  published_at: Date | null;
}

export const toResendTemplateItem = (t: TemplateListRow) => ({
  object: 'template' as const,
  id: t.id,
  name: t.name,
  alias: t.slug,
  status: t.published_at ? 'published' as const : 'draft' as const,
  published_at: t.published_at?.toISOString() ?? null,
  created_at: t.created_at.toISOString(),
  updated_at: t.updated_at.toISOString(),
});

/** The list query of the organization's templates with their newest publication, for a page of them. */
export const templateListQuery = (organizationId: string) => ({
  select: `SELECT t.*, (SELECT max(v.published_at) FROM mail_template_versions v WHERE v.template_id = t.id) AS published_at
             FROM mail_templates t WHERE t.organization_id = $1`,
  params: [organizationId],
});
