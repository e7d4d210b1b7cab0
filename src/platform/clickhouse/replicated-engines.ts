// One migration source for both deployments, as topics take a prefix: with CLICKHOUSE_REPLICATED=on a
// table's MergeTree-family engine becomes its Replicated* twin, kept in ZooKeeper at
// /clickhouse/tables/{shard}/<database>/<table> with the server's {replica} macro as its name there.
// Both of 18.16's engine syntaxes take those two arguments first: `ReplacingMergeTree(ver)` becomes
// `ReplicatedReplacingMergeTree('<path>', '{replica}', ver)`, the old `MergeTree(d, (k), 8192)` likewise.
// A materialized view with an engine of its own (an inner table) is rewritten the same way, under
// the view's name; one with `TO <table>` has no engine and is left alone.

/** The engines that have a Replicated* twin. */
const FAMILY = '(?:Replacing|Summing|Aggregating|Collapsing|VersionedCollapsing|Graphite)?MergeTree';

/** CREATE TABLE/MATERIALIZED VIEW [IF NOT EXISTS] [db.]name: the name, with or without backquotes. */
const CREATED = /^\s*CREATE\s+(?:TABLE|MATERIALIZED\s+VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(?:`?\w+`?\.)?`?(\w+)`?/i;

const ENGINE = new RegExp(`\\bENGINE\\s*=\\s*(${FAMILY})\\b(\\s*\\()?`, 'i');

/** The ZooKeeper path of a replicated table of `database`. */
export const replicatedPath = (database: string, table: string): string => `/clickhouse/tables/{shard}/${database}/${table}`;

/**
 * The statement with its MergeTree-family engine replaced by the Replicated* one; any other
 * statement, or one already replicated, unchanged. `table` names the ZooKeeper path when it is not
 * the created name (a table made under a temporary name, to be renamed).
 */
export function replicatedStatement(statement: string, database: string, table?: string): string {
  const created = CREATED.exec(statement);
  if (!created) return statement;
  const engine = ENGINE.exec(statement);
  if (!engine) return statement;
  const name = table ?? created[1]!;
  const args = `'${replicatedPath(database, name)}', '{replica}'`;
  // `Engine(` continues with its own arguments after ours; a bare `Engine` gets ours alone.
  const replaced = engine[2] ? `ENGINE = Replicated${engine[1]}(${args}, ` : `ENGINE = Replicated${engine[1]}(${args})`;
  const rest = statement.slice(engine.index + engine[0].length);
  // `Engine()` (no arguments of its own) would leave a trailing comma.
  return statement.slice(0, engine.index) + (engine[2] && /^\s*\)/.test(rest) ? `ENGINE = Replicated${engine[1]}(${args}` : replaced) + rest;
}
