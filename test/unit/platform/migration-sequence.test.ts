// The migration folders as the runners need them (migrations/README.md): each numbered 001..N
// with no gap and no number twice, and every migration recorded in migrations/shipped.sha256
// still there under its name with its content. A migration not recorded yet (a branch's) must
// come after the recorded ones: on a clash at merge, it is renumbered by a rename.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RENAMED_MIGRATIONS, REPLACED_012 } from '../../../src/platform/postgres/migration-renames.ts';
import { problemsOf, type Folder } from '../../support/migration-sequence.ts';

const MIGRATIONS = fileURLToPath(new URL('../../../migrations/', import.meta.url));
const shipped = readFileSync(`${MIGRATIONS}shipped.sha256`, 'utf8');

function folder(name: string): Folder {
  return {
    name,
    files: readdirSync(`${MIGRATIONS}${name}`).map((file) => ({
      file,
      sha256: createHash('sha256').update(readFileSync(`${MIGRATIONS}${name}/${file}`)).digest('hex'),
    })),
  };
}

describe('the migration folders', () => {
  it('are each one gapless sequence, every shipped migration unchanged under its name', () => {
    expect(problemsOf([folder('postgres'), folder('clickhouse')], shipped)).toEqual([]);
  });

  it('name every renamed migration by a file that exists, and no old name is a file again', () => {
    const names = new Set(readdirSync(`${MIGRATIONS}postgres`).map((f) => f.replace(/\.sql$/, '')));
    for (const [old, now] of RENAMED_MIGRATIONS) {
      expect(names.has(now), now).toBe(true);
      expect(names.has(old), old).toBe(false);
    }
    expect(names.has(REPLACED_012)).toBe(false);
  });
});

describe('the check', () => {
  const sha = (c: string) => c.repeat(64);
  const record = (lines: [string, string][]) => lines.map(([file, hash]) => `${hash}  ${file}`).join('\n');
  const shippedTwo = record([['pg/001_a.sql', sha('a')], ['pg/002_b.sql', sha('b')]]);
  const pg = (...files: [string, string][]): Folder => ({ name: 'pg', files: files.map(([file, sha256]) => ({ file, sha256 })) });

  it('passes the shipped migrations and a branch\'s next ones', () => {
    expect(problemsOf([pg(['001_a.sql', sha('a')], ['002_b.sql', sha('b')], ['003_c.sql', sha('c')])], shippedTwo)).toEqual([]);
  });

  it('refuses a gap, and tells the branch to renumber', () => {
    expect(problemsOf([pg(['001_a.sql', sha('a')], ['002_b.sql', sha('b')], ['052_c.sql', sha('c')])], shippedTwo)).toEqual([
      'pg/052_c.sql: numbers run 001, 002, … without a gap: expected 003. A migration not in migrations/shipped.sha256 takes the next free number: rename it to 003_c.sql',
    ]);
  });

  it('refuses a number taken twice', () => {
    expect(problemsOf([pg(['001_a.sql', sha('a')], ['002_b.sql', sha('b')], ['003_c.sql', sha('c')], ['003_d.sql', sha('d')])], shippedTwo)).toEqual([
      'pg/003_d.sql: 003 is taken by 003_c.sql. A migration not in migrations/shipped.sha256 takes the next free number: rename it to 004_d.sql',
    ]);
  });

  it('refuses a shipped migration renamed, or edited', () => {
    expect(problemsOf([pg(['001_a.sql', sha('a')], ['002_bb.sql', sha('b')])], shippedTwo)).toEqual([
      'pg/002_b.sql is recorded as shipped and is gone: a shipped migration is never renamed or removed (databases have applied it under that name)',
      'pg/002_bb.sql: 002 is taken by the shipped 002_b.sql. A migration not in migrations/shipped.sha256 takes the next free number: rename it to 003_bb.sql',
    ]);
    expect(problemsOf([pg(['001_a.sql', sha('a')], ['002_b.sql', sha('e')])], shippedTwo)).toEqual([
      'pg/002_b.sql was edited after it shipped: databases have applied it as it was; undo the edit and add a new migration',
    ]);
  });

  it('refuses a file the runner would take for a migration and that is not one', () => {
    expect(problemsOf([pg(['001_a.sql', sha('a')], ['002_b.sql', sha('b')], ['notes.md', sha('c')])], shippedTwo)).toEqual([
      'pg/notes.md: not a migration name (NNN_lowercase_words.sql); the runner reads every file of the folder',
    ]);
  });
});
