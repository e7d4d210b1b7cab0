import { describe, expect, it } from 'vitest';
import { splitStatements } from '../../../src/platform/clickhouse/migrate.ts';

describe('ClickHouse migration files', () => {
  it('split into statements at line-ending semicolons, skipping comment lines', () => {
    const text = `-- a comment; not a statement\nCREATE TABLE a (x String DEFAULT 'a;b')\nENGINE = Memory;\n\nCREATE TABLE b (y UInt8) ENGINE = Memory;\n`;
    expect(splitStatements(text)).toEqual([
      "CREATE TABLE a (x String DEFAULT 'a;b')\nENGINE = Memory",
      'CREATE TABLE b (y UInt8) ENGINE = Memory',
    ]);
  });
});
