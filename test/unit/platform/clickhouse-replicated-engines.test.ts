import { describe, expect, it } from 'vitest';
import { replicatedStatement } from '../../../src/platform/clickhouse/replicated-engines.ts';

describe('Replicated* engines from the one migration source', () => {
  it("puts the table's ZooKeeper path and the replica macro before the engine's own arguments, in either syntax", () => {
    expect(replicatedStatement('CREATE TABLE IF NOT EXISTS `linkmail`.scans (\n  x String\n) ENGINE = ReplacingMergeTree\nPARTITION BY toYYYYMM(ts)\nORDER BY x', 'linkmail')).toBe(
      "CREATE TABLE IF NOT EXISTS `linkmail`.scans (\n  x String\n) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/linkmail/scans', '{replica}')\nPARTITION BY toYYYYMM(ts)\nORDER BY x",
    );
    expect(replicatedStatement('CREATE TABLE db.scans_dims (d Date, scans UInt64) ENGINE = SummingMergeTree(scans) ORDER BY d', 'db')).toBe(
      "CREATE TABLE db.scans_dims (d Date, scans UInt64) ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/db/scans_dims', '{replica}', scans) ORDER BY d",
    );
    // 18.16's old syntax: date column, key, granularity.
    expect(replicatedStatement('CREATE TABLE db.old (d Date, k UInt8) ENGINE = MergeTree(d, (k), 8192)', 'db')).toBe(
      "CREATE TABLE db.old (d Date, k UInt8) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/db/old', '{replica}', d, (k), 8192)",
    );
    expect(replicatedStatement('CREATE TABLE db.t (k UInt8) ENGINE = AggregatingMergeTree() ORDER BY k', 'db')).toBe(
      "CREATE TABLE db.t (k UInt8) ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/db/t', '{replica}') ORDER BY k",
    );
  });

  it("rewrites a view's inner table under the view's name, and a table made under another name with the given one's path", () => {
    expect(replicatedStatement('CREATE MATERIALIZED VIEW IF NOT EXISTS db.v ENGINE = SummingMergeTree ORDER BY k AS SELECT k, count() AS n FROM db.t GROUP BY k', 'db')).toBe(
      "CREATE MATERIALIZED VIEW IF NOT EXISTS db.v ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/db/v', '{replica}') ORDER BY k AS SELECT k, count() AS n FROM db.t GROUP BY k",
    );
    expect(replicatedStatement('CREATE TABLE db.scans__replicated (x String) ENGINE = ReplacingMergeTree ORDER BY x', 'db', 'scans')).toContain("('/clickhouse/tables/{shard}/db/scans', '{replica}')");
  });

  it('leaves alone what has no MergeTree-family engine to replicate', () => {
    for (const statement of [
      'CREATE MATERIALIZED VIEW IF NOT EXISTS db.v TO db.t AS SELECT k FROM db.s',
      "CREATE TABLE db.t (k UInt8) ENGINE = ReplicatedMergeTree('/p', '{replica}') ORDER BY k",
      'CREATE TABLE db.m (k UInt8) ENGINE = Memory',
      'ALTER TABLE db.scans ADD COLUMN variant String',
      'INSERT INTO db.t SELECT * FROM db.s',
      'DROP TABLE IF EXISTS db.t',
    ]) expect(replicatedStatement(statement, 'db')).toBe(statement);
  });
});
