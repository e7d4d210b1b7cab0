// The columns products keep sealed (each product lists its own; src/service.ts
// hands them over), and the walks that keep every stored value sealed:
// - at start, under the migration lock (migrations.ts), values still in clear
//   are sealed: a SQL migration cannot, as it does not know the key. Rows
//   written before this release, and rows an older process writes during a
//   rolling upgrade, are sealed by the next start, so fresh and upgraded
//   databases end the same; a second run finds nothing to do.
// - reseal (src/reseal-secrets.ts): every value not sealed now (v2) under the
//   first key is sealed again under it: the rotation's middle step, and the
//   upgrade of v1 values (not bound to their row) to v2.
// Both rewrite one row per statement, and only if it still holds the value
// read, so they run beside the service: a secret rotated meanwhile keeps its
// new value, and every value stays readable throughout, since every key opens.
import type pg from 'pg';
import type { Logger } from '../logger.ts';
import { sealedPrefix, type SealedAt, type SealedSecrets } from './sealed-secrets.ts';

/** A text column a product keeps sealed. Its table's rows are addressed by `id`. Names come from code, never from input. */
export interface SealedColumn {
  table: string;
  column: string;
  /** The column its values are bound as, when SQL copies them from there (previous_secret from secret); else `column`. */
  boundAs?: string;
}

/** Where a value of this column in row `id` is bound to (sealed-secrets.ts). */
export const sealedAt = ({ table, column, boundAs }: SealedColumn, id: string): SealedAt => ({ table, column: boundAs ?? column, id });

/** A pool or one client. */
type Queryable = Pick<pg.ClientBase, 'query'>;

const PAGE = 500;
const SEALED = 'sealed:';

const named = ({ table, column }: SealedColumn) => `${table}.${column}`;

/**
 * Seals again under the current key each value of the column that does not start with `skip`
 * (`sealed:`: clear values only; the current key's prefix: clear values and those under other
 * keys). Walks the rows once, in id order; how many it rewrote.
 */
async function rewrite(db: Queryable, secrets: SealedSecrets, sealed: SealedColumn, skip: string): Promise<number> {
  const { table, column } = sealed;
  let rewritten = 0;
  let after: string | undefined;
  for (;;) {
    const { rows } = await db.query<{ id: string; value: string }>(
      `SELECT id, ${column} AS value FROM ${table}
        WHERE ${column} IS NOT NULL AND NOT starts_with(${column}, $1)${after === undefined ? '' : ' AND id > $2'}
        ORDER BY id LIMIT ${PAGE}`,
      after === undefined ? [skip] : [skip, after],
    );
    for (const row of rows) {
      let value: string;
      try {
        const at = sealedAt(sealed, row.id);
        value = secrets.seal(secrets.open(row.value, at), at);
      } catch (err) {
        throw new Error(`${named(sealed)} of row ${row.id}: ${(err as Error).message}`);
      }
      const { rowCount } = await db.query(`UPDATE ${table} SET ${column} = $1 WHERE id = $2 AND ${column} = $3`, [value, row.id, row.value]);
      rewritten += rowCount ?? 0;
    }
    if (rows.length < PAGE) return rewritten;
    after = rows[rows.length - 1]!.id;
  }
}

/** Key ids that sealed values name and these secrets do not hold, with how many values each, per column. */
async function keysNotHeld(db: Queryable, secrets: SealedSecrets, columns: readonly SealedColumn[]): Promise<string[]> {
  const missing: string[] = [];
  for (const sealed of columns) {
    const { rows } = await db.query<{ key_id: string; n: number }>(
      `SELECT split_part(${sealed.column}, ':', 3) AS key_id, count(*)::int AS n FROM ${sealed.table}
        WHERE starts_with(${sealed.column}, $1) GROUP BY 1 ORDER BY 1`,
      [SEALED],
    );
    for (const { key_id, n } of rows) if (!secrets.hasKey(key_id)) missing.push(`${n} value(s) of ${named(sealed)} under key id "${key_id}"`);
  }
  return missing;
}

/**
 * The start-up step (migrations.ts): stops with an error when stored values are sealed under a
 * key SECRETS_KEYS no longer holds (a key removed before reseal finished: nothing could read
 * them), then seals every value still in clear.
 */
export async function sealStoredSecrets(db: Queryable, secrets: SealedSecrets, columns: readonly SealedColumn[], log: Logger): Promise<void> {
  const missing = await keysNotHeld(db, secrets, columns);
  if (missing.length > 0) {
    throw new Error(`stored secrets are sealed under keys SECRETS_KEYS does not hold: ${missing.join('; ')}. Give those keys back (after the first key), run node src/reseal-secrets.ts, then remove them`);
  }
  for (const sealed of columns) {
    const count = await rewrite(db, secrets, sealed, SEALED);
    if (count > 0) log.info({ column: named(sealed), sealed: count, keyId: secrets.currentKeyId }, 'stored secrets sealed');
  }
}

/** What a reseal did to one column: values rewritten under the current key as v2, and values still under another key or v1 (written meanwhile by a process with an older first key or of an older release). */
export interface ResealResult {
  column: string;
  resealed: number;
  left: number;
}

/** Seals every stored value (clear, v1, or under another key) under the current key as v2, a row at a time. */
export async function resealStoredSecrets(db: Queryable, secrets: SealedSecrets, columns: readonly SealedColumn[]): Promise<ResealResult[]> {
  const current = sealedPrefix(secrets.currentKeyId);
  const results: ResealResult[] = [];
  for (const sealed of columns) {
    const resealed = await rewrite(db, secrets, sealed, current);
    const { rows: [left] } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${sealed.table} WHERE ${sealed.column} IS NOT NULL AND NOT starts_with(${sealed.column}, $1)`,
      [current],
    );
    results.push({ column: named(sealed), resealed, left: left!.n });
  }
  return results;
}
