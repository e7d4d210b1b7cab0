// The broadcast actor: the worker kind `mail-broadcasts` consumes mail.commands
// (keyed by broadcast id, so one broadcast's commands take turns) and runs its
// durable timers (broadcast-jobs.ts) beside it. Every command acts on the stored
// state, so a command delivered again, or a fan-out killed half-way and started
// again by the redelivered command, goes on from where the broadcast stands.
//   start   scheduled (and due) or sending: the fan-out, from its cursor
//   decide  testing: the winner written, then the rest of the fan-out
// An outage (Postgres restarting, say) is thrown back, and the runtime retries the
// command until it passes; any other error would fail the same way on every try, so
// the broadcast ends canceled with it in stats.reason (end-broadcast.ts) rather than
// staying `sending` while its command goes to the dead letters.
import { isTransient } from '../../platform/actors/transient.ts';
import type { ActorMessage, MessageWorkerKind } from '../../platform/actors/worker-kind.ts';
import type { Platform } from '../../platform/platform.ts';
import { withTransaction } from '../../platform/postgres/pool.ts';
import { mailCommandsTopic } from '../../../topics/mail-commands.ts';
import type { MailConfig } from '../config.ts';
import type { MessageOutbox } from '../emails/message-outbox.ts';
import { decide } from './ab-winner.ts';
import * as state from './broadcast-state.ts';
import { BroadcastJobs, type MailCommand } from './broadcast-jobs.ts';
import { endAfterFailure } from './end-broadcast.ts';
import { FanOut } from './fan-out.ts';

/** A start command may run this much before its scheduled time (clocks of two machines). */
const EARLY_MS = 1000;

export function broadcastKind(platform: Platform, outbox: MessageOutbox, config: Pick<MailConfig, 'MAIL_AB_MINUTE_MS' | 'MAIL_FANOUT_BATCH' | 'MAIL_FANOUT_BATCH_BYTES'>): MessageWorkerKind<MailCommand, undefined> {
  const log = platform.log.child({ component: 'mail-broadcasts' });
  const fanOut = new FanOut(platform.pg, outbox, config.MAIL_AB_MINUTE_MS, config.MAIL_FANOUT_BATCH, config.MAIL_FANOUT_BATCH_BYTES);
  return {
    kind: 'mail-broadcasts',
    topics: [mailCommandsTopic],
    concurrency: 2,
    background: new BroadcastJobs(platform.pg, platform.publisher, log),
    handle: async ({ value }: ActorMessage<MailCommand>) => {
      const id = value.broadcast_id;
      try {
        const go = await withTransaction(platform.pg, async (db) => {
          // A decision repeated after the winner was written goes on sending the rest.
          if (value.command === 'decide') await decide(db, id);
          // A scheduled broadcast whose time has come starts sending; a stale command (rescheduled later since) does nothing.
          return state.startSending(db, id, value.command, EARLY_MS);
        });
        if (go) {
          log.info({ broadcastId: id, command: value.command }, 'broadcast fan-out');
          await fanOut.run(id);
        }
      } catch (err) {
        if (isTransient(err)) throw err;
        const error = err instanceof Error ? err : new Error(String(err));
        if (!(await endAfterFailure(platform.pg, id, error))) throw err;
        log.error({ err: error, broadcastId: id, command: value.command }, 'broadcast fan-out failed for good; the broadcast is canceled with the reason');
      }
    },
  };
}
