// The names Postgres migrations had before they were numbered as one sequence again
// (migrations/README.md). node-pg-migrate records each applied migration by name and
// refuses a database whose applied names are not, position by position, the files'
// names: a database migrated under the old names is moved over by renaming its rows
// before the runner looks at them. Run under the migration lock (migrations.ts).
import type pg from 'pg';
import type { Logger } from '../logger.ts';

/**
 * Old name → new name. 020–036 were numbered with gaps (021, 024, 040, 050 …: numbers reserved
 * by branches being written at once); their content is unchanged. Never edit an entry: a database
 * may still carry any old name.
 */
export const RENAMED_MIGRATIONS: ReadonlyMap<string, string> = new Map([
  ['021_mail_tracking_automated', '020_mail_tracking_automated'],
  ['022_mail_delivery_copies', '021_mail_delivery_copies'],
  ['024_mail_webhooks', '022_mail_webhooks'],
  ['025_mail_email_cancel_list', '023_mail_email_cancel_list'],
  ['026_links_updated_at', '024_links_updated_at'],
  ['027_mail_event_kinds', '025_mail_event_kinds'],
  ['028_link_destinations', '026_link_destinations'],
  ['029_link_events_previews_passwords', '027_link_events_previews_passwords'],
  ['030_links_branded_domains', '028_links_branded_domains'],
  ['031_mail_resend_resources', '029_mail_resend_resources'],
  ['032_mail_template_resend_fields', '030_mail_template_resend_fields'],
  ['033_mail_broadcast_without_topic', '031_mail_broadcast_without_topic'],
  ['034_mail_broadcast_resend_face', '032_mail_broadcast_resend_face'],
  ['040_link_key_scopes', '033_link_key_scopes'],
  ['041_link_utm', '034_link_utm'],
  ['050_link_domain_fallbacks', '035_link_domain_fallbacks'],
  ['051_scan_privacy', '036_scan_privacy'],
]);

/**
 * `012_mail_publish_lease` was replaced by `012_mail_message_outbox` (and `009_mail_messages`
 * edited) on 2026-11-24, 41 minutes after it was written: not a rename, a different schema. A
 * database migrated in between carries it, and the runner stopped it there (012 did not match).
 * It is brought to what the new 009 and 012 make: the messages it had not yet published (the
 * rows its relay would have taken) wait in the outbox; then 013 and on run as on any database.
 */
export const REPLACED_012 = '012_mail_publish_lease';
const MOVE_012_TO_OUTBOX = `
  CREATE TABLE mail_message_outbox (
    message_id   uuid PRIMARY KEY REFERENCES mail_messages (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL,
    lease_until  timestamptz
  );
  CREATE INDEX mail_message_outbox_age ON mail_message_outbox (created_at);
  INSERT INTO mail_message_outbox (message_id, created_at)
    SELECT id, created_at FROM mail_messages WHERE published_at IS NULL AND status <> 'suppressed';
  DROP INDEX mail_messages_unpublished;
  ALTER TABLE mail_messages DROP COLUMN published_at, DROP COLUMN publish_lease_until;
  UPDATE pgmigrations SET name = '012_mail_message_outbox' WHERE name = '${REPLACED_012}';
`;

/** Renames the applied rows of a database migrated under the old names; nothing on a new or moved database. */
export async function renameAppliedMigrations(session: pg.Client, log: Logger): Promise<void> {
  const table = await session.query<{ exists: boolean }>(`SELECT to_regclass('pgmigrations') IS NOT NULL AS exists`);
  if (!table.rows[0]!.exists) return;
  await session.query('BEGIN');
  try {
    const replaced = await session.query(`SELECT 1 FROM pgmigrations WHERE name = $1`, [REPLACED_012]);
    if (replaced.rowCount) await session.query(MOVE_012_TO_OUTBOX);
    const renamed = await session.query(
      `UPDATE pgmigrations m SET name = r.new FROM unnest($1::text[], $2::text[]) AS r(old, new) WHERE m.name = r.old`,
      [[...RENAMED_MIGRATIONS.keys()], [...RENAMED_MIGRATIONS.values()]],
    );
    await session.query('COMMIT');
    if (replaced.rowCount || renamed.rowCount) {
      log.info({ renamed: renamed.rowCount, replaced012: Boolean(replaced.rowCount) }, 'postgres migrations moved to their new names');
    }
  } catch (err) {
    await session.query('ROLLBACK').catch(() => {});
    throw err;
  }
}
