// Which handler errors are an outage of something we depend on (retry until it
// is back) rather than a problem with the message (retry a few times, then
// dead-letter). Restarting Postgres, ClickHouse, Kafka or the registry must not
// send good messages to the dead-letter topic.
import { replicationOutage } from '../clickhouse/replication-errors.ts';

const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND',
  'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_CLOSED',
]);

// "not queryable": a query on a pooled connection that Postgres ended under it (an idle timeout while its process was stopped).
const TRANSIENT_MESSAGE = /connection terminated|not queryable|connection refused|socket hang up|fetch failed|timeout|timed out|ECONNREFUSED|ECONNRESET|network|not available|too many clients|the database system is (starting|shutting) up/i;

/**
 * Postgres SQLSTATEs of connection loss, shutdown, overload, retryable conflicts, and a session ended
 * for idling in a transaction (25P03) or holding a lock (57P05) while its process was stopped. A
 * SQLSTATE has five characters: a newer ClickHouse's parsed code "53" (TYPE_MISMATCH) is no class 53.
 */
const isTransientPgCode = (code: string) => (code.length === 5 && /^(08|53|57P0[1-3])/.test(code)) || ['40001', '40P01', '25P03', '57P05'].includes(code);

export function isTransient(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const err = e as { code?: unknown; retriable?: unknown; status?: unknown; message?: unknown; name?: unknown };
    if (typeof err.code === 'string' && (NETWORK_CODES.has(err.code) || isTransientPgCode(err.code))) return true;
    // ClickHouse replicas without ZooKeeper, too few of them live, an insert's quorum unconfirmed;
    // and a ClickHouse server the client left (killed, hung: clickhouse/server-health.ts).
    if (replicationOutage(err) !== undefined || err.name === 'ServerUnavailable') return true;
    // kafkajs marks its retriable errors.
    if (err.retriable === true) return true;
    // HTTP services (registry, ClickHouse) answering 5xx or 429.
    if (typeof err.status === 'number' && (err.status >= 500 || err.status === 429)) return true;
    if (typeof err.message === 'string' && TRANSIENT_MESSAGE.test(err.message)) return true;
  }
  return false;
}
