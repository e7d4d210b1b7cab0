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
// holder stopped after its confirm and before its write leaves the process would still write
// once resumed, after another took the lock: assertHeld(), called as the write's bytes leave,
// refuses unless the last confirm was sent less than half the bound ago. Postgres cannot
// end the session before that confirm's send plus the bound, so the write reaches the server while
// the lock is held, with half the bound left for the server to store it before another holder
// can look.
import type pg from 'pg';
import type { Pool } from './pool.ts';

export interface Lease {
  /** Resolves while the lock is held; throws (a retriable error) once Postgres has ended the session. */
  confirm(): Promise<void>;
  /**
   * Throws LockLostError unless the lock is surely held for half the bound yet: a confirm sent less
   * than half the bound ago, and the session not ended since. Synchronous, to be called as a guarded
   * write leaves the process: only a stop in the few microseconds between it and the write's system
   * call escapes it.
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
    // When the last confirm was sent (performance.now()); none yet: assertHeld refuses.
    let confirmSentAt = -Infinity;
    try {
      if (boundMs > 0) keepAlive = setInterval(() => void client.query('SELECT 1').catch(onError), Math.max(100, Math.floor(boundMs / 3)));
      return await fn({
        confirm: async () => {
          if (broken) throw new LockLostError(`lost the lock ${name}: ${broken.message}`, { cause: broken });
          const sentAt = performance.now();
          await client.query('SELECT 1').catch((err: Error) => {
            onError(err);
            throw new LockLostError(`lost the lock ${name}: ${err.message}`, { cause: err });
          });
          confirmSentAt = sentAt;
        },
        assertHeld: () => {
          if (broken) throw new LockLostError(`lost the lock ${name}: ${broken.message}`, { cause: broken });
          const sinceMs = performance.now() - confirmSentAt;
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
