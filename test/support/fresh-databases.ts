// Postgres and ClickHouse databases of a test's own, beside the run's: for processes that must
// start on empty databases, or whose workers would take the queued work of other files sharing
// the run's database (a mail sender, a webhook dispatcher).
import { randomBytes } from 'node:crypto';
import { dropDatabases } from './drop-databases.ts';
import { testConfig, testEnv } from './env.ts';

/** Fresh databases named `linkmail_<what>_<random>`, with their topics under `<this file's prefix>.<what>`. */
export function freshDatabases(what: string) {
  const name = `linkmail_${what}_${randomBytes(4).toString('hex')}`;
  const databaseEnv = (): Record<string, string> => {
    const url = new URL(testConfig().DATABASE_URL);
    url.pathname = `/${name}`;
    return { DATABASE_URL: url.toString(), CLICKHOUSE_DATABASE: name };
  };
  return {
    name,
    /** The settings that point at them, the topics left as they are (call within a test or hook). */
    databaseEnv,
    /** The settings that point a process at them (call within a test or hook). */
    env: (): Record<string, string> => ({ ...databaseEnv(), TOPIC_PREFIX: `${testEnv().TOPIC_PREFIX}.${what}` }),
    drop: () => dropDatabases(testConfig(), name),
  };
}
