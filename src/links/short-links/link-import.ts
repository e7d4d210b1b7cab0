// A streamed CSV import of links (POST /api/v1/links/import). The header row names
// the columns: `destination` (or Bitly's `long_url`, Shlink's `longUrl`), `shortId`
// (or `shortCode`), `tags` (`;`-separated), `title`, `expiresAt`; other columns are
// ignored, so another shortener's export imports as it is. Each row is checked as
// POST /api/v1/links checks a body (its schema, then LinkStore.prepare) and the
// good ones are inserted 1000 at a time as the body arrives (LinkStore.insertPrepared),
// all in one transaction: an import refused as a whole (over the row limit, an
// unreadable CSV, no destination column) changes nothing. A bad row is rejected
// alone, with its line (the header is line 1) and the code POST /links would answer.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { compileBodyValidator } from '../../platform/http/validation.ts';
import type { LinkChangelog } from '../changelog/link-changelog.ts';
import { domainOfLink } from './link-domain.ts';
import { CreateLinkBody, type CreateLinkInput } from './link-schemas.ts';
import type { LinkStore, PreparedLink } from './link-store.ts';

export const MAX_IMPORT_ROWS = 100_000;
export const IMPORT_BATCH = 1000;
/** Rejected rows listed in the answer at most; `rejected` counts them all. */
export const MAX_LISTED_ERRORS = 1000;
/** A record (one row, its quoted line breaks included) longer than this is an unreadable CSV. */
const MAX_RECORD_BYTES = 64 * 1024;

/** Column names as exports spell them, to the field they fill (compared case-insensitively). */
const COLUMNS: Readonly<Record<string, 'destination' | 'shortId' | 'tags' | 'title' | 'expiresAt'>> = {
  destination: 'destination',
  long_url: 'destination',
  longurl: 'destination',
  shortid: 'shortId',
  shortcode: 'shortId',
  tags: 'tags',
  title: 'title',
  expiresat: 'expiresAt',
};

export interface LinkImportResult {
  created: number;
  skipped: number;
  rejected: number;
  errors: { line: number; code: string }[];
}

/** Why the import as a whole was refused; nothing was created. */
export type LinkImportRefusal =
  | { reason: 'missing_destination_column' }
  | { reason: 'invalid_csv'; line: number | undefined; problem: string }
  | { reason: 'too_many_rows'; max: number }
  | { reason: 'empty_import' }
  /** The body paused longer than Postgres keeps an idle transaction open (DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS). */
  | { reason: 'import_stalled' };

class ImportRefused extends Error {
  readonly refusal: LinkImportRefusal;

  constructor(refusal: LinkImportRefusal) {
    super(refusal.reason);
    this.refusal = refusal;
  }
}

const checkCreate = compileBodyValidator(CreateLinkBody);

/** A row's fields as POST /links takes them: empty cells left out, tags split on `;`. */
function rowInput(header: readonly (string | undefined)[], record: readonly string[]): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  header.forEach((field, i) => {
    const value = record[i]?.trim() ?? '';
    if (!field || value === '') return;
    input[field] = field === 'tags' ? value.split(';').map((t) => t.trim()).filter(Boolean) : value;
  });
  return input;
}

/** Line breaks inside a record's text (quoted cells' CRLF, CR or LF each one), not the one ending it. */
function lineBreaksWithin(raw: string): number {
  const inner = raw.replace(/^\n/, '').replace(/(\r\n|\r|\n)$/, '');
  return inner.match(/\r\n|\r|\n/g)?.length ?? 0;
}

export interface LinkImportDeps {
  store: LinkStore;
  changelog: LinkChangelog;
}

export async function importLinks(deps: LinkImportDeps, workspaceId: string, body: Readable): Promise<{ ok: true; result: LinkImportResult } | { ok: false; refusal: LinkImportRefusal }> {
  try {
    const { result, created, rows } = await importRows(deps.store, workspaceId, body);
    if (rows === 0) return { ok: false, refusal: { reason: 'empty_import' } };
    // Committed: publish now what fits in a few seconds; the outbox relay publishes the rest.
    await deps.changelog.publishSoon(created, 5000);
    return { ok: true, result };
  } catch (err) {
    if (err instanceof ImportRefused) return { ok: false, refusal: err.refusal };
    // The transaction waits on the body between batches; Postgres ends it if the body pauses too long.
    if ((err as { code?: unknown }).code === '25P03' || /Connection terminated/.test((err as Error).message)) return { ok: false, refusal: { reason: 'import_stalled' } };
    const csv = err as { code?: unknown; lines?: number; message?: string };
    if (typeof csv.code === 'string' && csv.code.startsWith('CSV_')) return { ok: false, refusal: { reason: 'invalid_csv', line: csv.lines, problem: csv.message ?? csv.code } };
    throw err;
  }
}

async function importRows(store: LinkStore, workspaceId: string, body: Readable) {
  const result: LinkImportResult = { created: 0, skipped: 0, rejected: 0, errors: [] };
  const created: string[] = [];
  const reject = (line: number, code: string) => {
    result.rejected++;
    if (result.errors.length < MAX_LISTED_ERRORS) result.errors.push({ line, code });
  };
  // Rows seen, by a digest of their fields: a row repeated exactly is skipped, not rejected.
  const seen = new Set<string>();
  let rows = 0;

  return store.tx(async (client) => {
    // Imported links go where POST /links puts a link that names no domain: the workspace's default.
    const domain = await domainOfLink(client, workspaceId, undefined, store.baseHost);
    // The body is read from here on, by the loop below (which is listening for the parser's errors).
    const parser = body.pipe(parse({ bom: true, relax_column_count: true, raw: true, max_record_size: MAX_RECORD_BYTES }));
    body.on('error', (err) => parser.destroy(err));
    let batch: { line: number; link: PreparedLink }[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const results = await store.insertPrepared(client, workspaceId, domain ?? null, batch.map((b) => b.link));
      results.forEach((r, i) => {
        if (r.ok) {
          result.created++;
          created.push(r.row.id);
        } else reject(batch[i]!.line, r.refusal.reason);
      });
      batch = [];
    };

    let header: (string | undefined)[] | undefined;
    // csv-parse's own line count (info.lines) counts a CRLF inside a quoted cell twice: lines are counted here.
    let nextLine = 1;
    for await (const { record, raw } of parser as AsyncIterable<{ record: string[]; raw: string }>) {
      const line = nextLine + lineBreaksWithin(raw);
      nextLine = line + 1;
      if (!header) {
        header = record.map((h) => COLUMNS[h.trim().toLowerCase()]);
        if (!header.includes('destination')) throw new ImportRefused({ reason: 'missing_destination_column' });
        continue;
      }
      // A blank line (or one of empty cells) is skipped.
      if (record.every((v) => v.trim() === '')) {
        result.skipped++;
        continue;
      }
      if (++rows > MAX_IMPORT_ROWS) throw new ImportRefused({ reason: 'too_many_rows', max: MAX_IMPORT_ROWS });
      const input = rowInput(header, record);
      const digest = createHash('sha1').update(JSON.stringify(input)).digest('base64');
      if (seen.has(digest)) {
        result.skipped++;
        continue;
      }
      seen.add(digest);
      const problems = checkCreate(input);
      if (problems) {
        reject(line, problems.code);
        continue;
      }
      const prepared = await store.prepare(input as CreateLinkInput);
      if (!prepared.ok) {
        reject(line, prepared.refusal.reason);
        continue;
      }
      batch.push({ line, link: prepared.link });
      if (batch.length >= IMPORT_BATCH) await flush();
    }
    await flush();
    // Rows of a batch are rejected when it is written: list them in line order.
    result.errors.sort((x, y) => x.line - y.line);
    return { result, created, rows };
  });
}
