// A Postgres session advisory lock held while fn runs: serialises work on one
// name across processes (e.g. two consumers that briefly both think they own a
// partition during a rebalance).
//
// A holder that stops answering (SIGSTOP, a frozen VM) must not block the others for longer than
// the pool's idle_in_transaction_session_timeout (createPool): the lock's session gets that
// timeout as its idle_session_timeout, so Postgres ends it, and frees the lock, once it has been
// silent that long. A live holder keeps it busy with a query a third of that apart, however long fn
// runs. TCP keepalives would not do: a stopped process's kernel still answers them.
//
// fn gets a lease whose confirm() throws once the lock is lost: a holder checks it right before a
// write that the lock guards, so a holder resumed after its session was ended writes nothing. A
// holder stopped after its confirm, while its write is on its way out, would still complete it once
// resumed, after another took the lock: assertHeld() refuses unless the last confirm was sent less
// than half the bound ago. Postgres ends a silent session no sooner than the bound after that send,
// so a write that passed it (a ClickHouse insert checks it again before its last byte:
// idempotent-sink.ts) reaches the server before the lock can be lost, with half the bound for the
// server to store it before another holder can look, unless its holder is stopped in the few ticks
// between the last check and the write's end leaving. It guards against its holder being stopped;
// a session ended by other means (pg_terminate_backend, Postgres restarting) shows as `broken` only
// once the client has read of it.
import type pg from 'pg';
import type { Pool } from './pool.ts';

export interface Lease {
  /** Resolves while the lock is held; throws (a retriable error) once Postgres has ended the session. */
  confirm(): Promise<void>;
  /**
   * Throws LockLostError unless the holder cannot have been stopped for long enough to lose the lock:
   * its last confirm was sent less than half the bound ago (by the monotonic clock and by the wall
   * clock, whichever says longer), and the client has not heard the session end. Synchronous, to be
   * called as a guarded write goes out.
   */
  assertHeld(): void;
}

export class LockLostError extends Error {
  /** The handler's retries treat it as an outage: the next attempt takes the lock again. */
  readonly retriable = true;
}

export async function withAdvisoryLock<T>(pool: Pool, name: string, fn: (lease: Lease) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // Postgres ending the session while no query runs is an 'error' event: the lock is lost, not the process.
  const onError = (err: Error) => (broken ??= err);
  client.on('error', onError);
  let keepAlive: NodeJS.Timeout | undefined;
  try {
    const boundMs = await boundSession(client);
    await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [name]);
    const lost = (err: Error) => new LockLostError(`lost the lock ${name}: ${err.message}`, { cause: err });
    // When the last confirm was sent, by each clock; none yet: assertHeld refuses (under a bound).
    let confirmSentAt = { monotonic: -Infinity, wall: -Infinity };
    try {
      if (boundMs > 0) keepAlive = setInterval(() => void client.query('SELECT 1').catch(onError), Math.max(100, Math.floor(boundMs / 3)));
      return await fn({
        confirm: async () => {
          if (broken) throw lost(broken);
          const sentAt = { monotonic: performance.now(), wall: Date.now() };
          await client.query('SELECT 1').catch((err: Error) => {
            onError(err);
            throw lost(err);
          });
          confirmSentAt = sentAt;
        },
        assertHeld: () => {
          if (broken) throw lost(broken);
          // The monotonic clock may stand still while the machine is suspended; the wall clock does not.
          const sinceMs = Math.max(performance.now() - confirmSentAt.monotonic, Date.now() - confirmSentAt.wall);
          if (boundMs > 0 && !(sinceMs < boundMs / 2)) throw new LockLostError(`the lock ${name} was last confirmed ${Math.round(sinceMs)} ms ago, more than half its ${boundMs} ms bound`);
        },
      });
    } finally {
      clearInterval(keepAlive);
      if (!broken) {
        await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0)), set_config($2, $3, false)', [name, 'idle_session_timeout', '0']).catch(onError);
      }
    }
  } finally {
    client.off('error', onError);
    // A connection whose unlock failed may still hold the lock: destroy it rather than reuse it.
    client.release(broken);
  }
}

/** Gives the session the pool's bound on silent transactions as its idle_session_timeout; resolves to it in ms (0: none). */
async function boundSession(client: pg.PoolClient): Promise<number> {
  const { rows } = await client.query<{ ms: number }>(
    `SELECT set_config('idle_session_timeout', current_setting('idle_in_transaction_session_timeout'), false),
            (SELECT setting::int FROM pg_settings WHERE name = 'idle_in_transaction_session_timeout') AS ms`,
  );
  return rows[0]!.ms;
}
