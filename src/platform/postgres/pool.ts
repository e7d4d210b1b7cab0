// Postgres connection pool: the system of record.
import pg from 'pg';
import type { Config } from '../config.ts';

export type Pool = pg.Pool;

export interface PoolOptions {
  /** Connections at most (DATABASE_POOL_SIZE by default). */
  max?: number;
  /**
   * Commits return before the commit is on disk (synchronous_commit off): for writes whose loss
   * in a Postgres crash only repeats work, such as deleting published outbox rows.
   */
  asynchronousCommit?: boolean;
  /**
   * The bound on a silent transaction, when it must differ from DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS:
   * for transactions held across a Kafka send, which a broker's failover can make longer.
   */
  idleInTransactionTimeoutMs?: number;
  /** What the sessions are for, after the process in their application_name (`linkmail:<pid>:<use>`). */
  use?: string;
}

export function createPool(config: Pick<Config, 'DATABASE_URL' | 'DATABASE_POOL_SIZE' | 'DATABASE_CONNECT_TIMEOUT_MS' | 'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS'>, options: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: config.DATABASE_URL,
    max: options.max ?? config.DATABASE_POOL_SIZE,
    ...(options.asynchronousCommit ? { options: '-c synchronous_commit=off' } : {}),
    // Fail instead of queueing forever when every connection is busy or the server hangs (one that
    // is down refuses at once).
    connectionTimeoutMillis: config.DATABASE_CONNECT_TIMEOUT_MS,
    // pg_stat_activity and pg_locks name the process behind each session (which one holds a lock).
    application_name: `linkmail:${process.pid}${options.use ? `:${options.use}` : ''}`,
    statement_timeout: 30_000,
    // A transaction left silent this long (its process stopped) is ended and its row locks freed;
    // advisory-lock.ts gives a lock's session the same bound.
    idle_in_transaction_session_timeout: options.idleInTransactionTimeoutMs ?? config.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
  });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  return pool;
}

/**
 * Runs fn in a transaction on one client: committed when it resolves, rolled back when it
 * throws. A client whose ROLLBACK fails is released as broken, so the pool does not hand
 * out a connection stuck in a transaction.
 */
export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // Postgres ending the session between two statements (idle_in_transaction_session_timeout) is an
  // 'error' event: the transaction fails at its next statement, the process goes on.
  const onError = (err: Error) => (broken ??= err);
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    if (!broken) await client.query('ROLLBACK').catch(onError);
    throw err;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

/** The same server, user and TLS settings (the URL's query: sslmode, sslrootcert), another database. */
export function databaseUrlFor(databaseUrl: string, database: string): string {
  const url = new URL(databaseUrl);
  url.pathname = `/${encodeURIComponent(database)}`;
  return url.toString();
}

/** Creates the database named in the URL if it does not exist (connecting to the `postgres` maintenance db). */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  const client = new pg.Client({ connectionString: databaseUrlFor(databaseUrl, 'postgres') });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      } catch (err) {
        // Another process created it between our check and create: duplicate_database, or the
        // unique index of pg_database when both creates ran at once.
        const code = (err as { code?: string }).code;
        if (code !== '42P04' && code !== '23505') throw err;
      }
    }
  } finally {
    await client.end();
  }
}
