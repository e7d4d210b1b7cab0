// A streamed CSV import of links (POST /api/v1/links/import). The header row names
// the columns: `destination` (or Bitly's `long_url`, Shlink's `longUrl`), `shortId`
// (or `shortCode`), `tags` (`;`-separated), `title`, `expiresAt`; other columns are
// ignored, so another shortener's export imports as it is. Each row is checked as
// POST /api/v1/links checks a body (its schema, then LinkStore.prepare) and the
// good ones are staged 1000 at a time as the body arrives, each batch in one short
// statement, and moved into links in one transaction once the body has ended
// (link-import-staging.ts): an import refused as a whole (over a limit, stalled, an
// unreadable CSV, no destination column) changes nothing, and nothing holds a
// connection or a lock while the client is sending. At most one import runs per
// workspace. A bad row is rejected alone, with its line (the header is line 1) and
// the code POST /links would answer.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { compileBodyValidator } from '../../platform/http/validation.ts';
import type { LinkChangelog } from '../changelog/link-changelog.ts';
import type { LinkImportStaging, StagedRow } from './link-import-staging.ts';
import { CreateLinkBody, type CreateLinkInput } from './link-schemas.ts';
import type { LinkStore } from './link-store.ts';
import { watchUpload, type UploadLimits } from './upload-limits.ts';

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
  /** Another import of the workspace is running. */
  | { reason: 'import_running' }
  /** The body is over LINK_IMPORT_MAX_BYTES. */
  | { reason: 'import_too_large'; maxBytes: number }
  /** The body paused longer than LINK_IMPORT_STALL_TIMEOUT_MS, or took longer than LINK_IMPORT_DEADLINE_MS in all. */
  | { reason: 'import_stalled'; why: 'paused' | 'too_slow'; ms: number };

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
  staging: LinkImportStaging;
  changelog: LinkChangelog;
  limits: UploadLimits;
}

/** How long an import's claim on its workspace lasts past the upload's deadline, for the move into links. */
const MOVE_MARGIN_MS = 5 * 60_000;

export async function importLinks(deps: LinkImportDeps, workspaceId: string, body: Readable): Promise<{ ok: true; result: LinkImportResult } | { ok: false; refusal: LinkImportRefusal }> {
  const importId = await deps.staging.begin(workspaceId, deps.limits.deadlineMs + MOVE_MARGIN_MS);
  if (importId === undefined) return { ok: false, refusal: { reason: 'import_running' } };
  let moved = false;
  try {
    const read = await readRows(deps, importId, body);
    if (read.rows === 0) return { ok: false, refusal: { reason: 'empty_import' } };
    const { result } = read;
    const created: string[] = [];
    await deps.staging.move(deps.store, workspaceId, importId, (line, r) => {
      if (r.ok) {
        result.created++;
        created.push(r.row.id);
      } else read.reject(line, r.refusal.reason);
    });
    moved = true;
    // Rows are rejected when read or when moved: list them in line order.
    result.errors.sort((x, y) => x.line - y.line);
    // Committed: publish now what fits in a few seconds; the outbox relay publishes the rest.
    await deps.changelog.publishSoon(created, 5000);
    return { ok: true, result };
  } catch (err) {
    if (err instanceof ImportRefused) return { ok: false, refusal: err.refusal };
    const csv = err as { code?: unknown; lines?: number; message?: string };
    if (typeof csv.code === 'string' && csv.code.startsWith('CSV_')) return { ok: false, refusal: { reason: 'invalid_csv', line: csv.lines, problem: csv.message ?? csv.code } };
    throw err;
  } finally {
    if (!moved) await deps.staging.drop(importId);
  }
}

/** Reads the body's rows, checks each, and stages the good ones; answers what it counted. */
async function readRows(deps: LinkImportDeps, importId: string, body: Readable) {
  const result: LinkImportResult = { created: 0, skipped: 0, rejected: 0, errors: [] };
  const reject = (line: number, code: string) => {
    result.rejected++;
    if (result.errors.length < MAX_LISTED_ERRORS) result.errors.push({ line, code });
  };
  // Rows seen, by a digest of their fields: a row repeated exactly is skipped, not rejected.
  const seen = new Set<string>();
  // Every line under the header counts toward the row limit, blank ones too; `rows` are the others.
  let records = 0;
  let rows = 0;

  const parser = body.pipe(parse({ bom: true, relax_column_count: true, raw: true, max_record_size: MAX_RECORD_BYTES }));
  const stopReading = (err: Error) => {
    body.unpipe(parser);
    parser.destroy(err);
  };
  body.on('error', stopReading);
  // Watched once piped (a 'data' listener starts the flow): a breach ends the parse, not the connection.
  const upload = watchUpload(body, deps.limits, (why) => {
    const { maxBytes, stallMs, deadlineMs } = deps.limits;
    stopReading(new ImportRefused(why === 'too_large' ? { reason: 'import_too_large', maxBytes } : { reason: 'import_stalled', why: why === 'stalled' ? 'paused' : 'too_slow', ms: why === 'stalled' ? stallMs : deadlineMs }));
  });
  let batch: StagedRow[] = [];
  const flush = async () => {
    await deps.staging.stage(importId, batch);
    batch = [];
    upload.progress();
  };

  try {
    let header: (string | undefined)[] | undefined;
    // csv-parse's own line count (info.lines) counts a CRLF inside a quoted cell twice: lines are counted here.
    let nextLine = 1;
    for await (const { record, raw } of parser as AsyncIterable<{ record: string[]; raw: string }>) {
      upload.progress();
      const line = nextLine + lineBreaksWithin(raw);
      nextLine = line + 1;
      if (!header) {
        header = record.map((h) => COLUMNS[h.trim().toLowerCase()]);
        if (!header.includes('destination')) throw new ImportRefused({ reason: 'missing_destination_column' });
        continue;
      }
      if (++records > MAX_IMPORT_ROWS) throw new ImportRefused({ reason: 'too_many_rows', max: MAX_IMPORT_ROWS });
      // A blank line (or one of empty cells) is skipped.
      if (record.every((v) => v.trim() === '')) {
        result.skipped++;
        continue;
      }
      rows++;
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
      const prepared = await deps.store.prepare(input as CreateLinkInput);
      if (!prepared.ok) {
        reject(line, prepared.refusal.reason);
        continue;
      }
      batch.push({ line, link: prepared.link });
      if (batch.length >= IMPORT_BATCH) await flush();
    }
  } finally {
    upload.stop();
  }
  await flush();
  return { result, reject, rows };
}
