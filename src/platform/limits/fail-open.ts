// Limits protect the service; they must not take it down. A limit check that
// cannot run (Redis away) lets the request through, and says so in the log.
import type { Logger } from '../logger.ts';

export async function failOpen<T>(log: Logger, what: string, check: () => Promise<T>, whenUnavailable: T): Promise<T> {
  try {
    return await check();
  } catch (err) {
    log.warn({ err, limit: what }, 'limit store unavailable; request let through');
    return whenUnavailable;
  }
}
