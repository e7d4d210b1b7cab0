// What a bounce or a complaint about one recipient of a message does, wherever it
// was learnt (a report on the inbound address, or the relay refusing the recipient
// at hand-over): an event with the recipient, once per message, recipient and
// verdict, and for a permanent bounce or a complaint the address on the
// organization's suppression list, so nothing more goes to it. The one path for both.
import type { PoolClient } from 'pg';
import { recordEvents } from '../events/mail-events.ts';

export interface RecipientVerdict {
  organizationId: string;
  messageId: string;
  /** Lower-cased; always one of the message's own recipients (the callers check). */
  recipient: string;
  kind: 'bounce' | 'complaint';
  /** The DSN status, the feedback type, or the relay's reply. */
  detail: string;
  /** A bounce that is final (5.x.x); a complaint always suppresses. */
  permanent: boolean;
  /** Where it was learnt: a received `report` (the message's last event then) or the `handover`. */
  source: 'report' | 'handover';
}

/** Records the verdicts in the caller's transaction; returns the ids of the events new. */
export async function recordVerdicts(db: PoolClient, verdicts: readonly RecipientVerdict[]): Promise<string[]> {
  if (verdicts.length === 0) return [];
  const ids = await recordEvents(db, verdicts.map((v) => {
    const type = v.kind === 'bounce' ? 'bounced' as const : 'complained' as const;
    return { organization_id: v.organizationId, message_id: v.messageId, type, recipient: v.recipient, detail: v.detail, once_key: `${type}-${v.source}:${v.messageId}:${v.recipient}` };
  }));
  const suppress = verdicts.filter((v) => v.kind === 'complaint' || v.permanent);
  if (suppress.length > 0) {
    await db.query(
      `INSERT INTO mail_suppressions (organization_id, email, reason)
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[]) ON CONFLICT (organization_id, email) DO NOTHING`,
      [suppress.map((v) => v.organizationId), suppress.map((v) => v.recipient), suppress.map((v) => (v.kind === 'bounce' ? 'bounce' : 'complaint'))],
    );
  }
  return ids;
}
