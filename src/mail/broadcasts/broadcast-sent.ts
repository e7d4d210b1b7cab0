// The one way a broadcast becomes `sent`: with its broadcast.sent event (the
// broadcast as GET /broadcasts/:id shows it), in the fan-out's transaction.
// The outbox relay publishes the event (the fan-out holds no mail.events publisher).
import type { PoolClient } from 'pg';
import { recordEvents } from '../events/mail-events.ts';
import * as state from './broadcast-state.ts';
import { toBroadcast } from './broadcasts.ts';

export async function markSent(db: PoolClient, broadcastId: string, reason: string | null = null): Promise<void> {
  const b = await state.sent(db, broadcastId, reason);
  if (!b) return;
  await recordEvents(db, [{ organization_id: b.organization_id, broadcast_id: b.id, type: 'broadcast.sent', data: toBroadcast(b), once_key: `broadcast.sent:${b.id}` }]);
}
