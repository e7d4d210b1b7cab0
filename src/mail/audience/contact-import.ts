// A streamed bulk import of contacts: NDJSON (one contact object per line) or CSV
// (RFC 4180, a header row naming email, first_name, last_name, status and any other
// column as a property). The body is read as it arrives and written in batches of
// 1000 rows; while a batch is written the stream waits, so memory does not grow with
// the rows. A bad row is rejected alone, with its line and why. An import that cannot
// go on (no email column, an unreadable CSV, too large, no rows) is an ImportRefusal,
// which contact-import-route.ts answers; the batches written before it stay written.
import { createInterface } from 'node:readline';
import { Transform, type Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { findUnstorable } from '../../platform/http/storable-text.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { contactEventsCte } from '../events/contact-events.ts';
import { CONTACT_STATUSES, contactEmail, MAX_NAME, propertiesProblem, type ContactStatus, type PropertyValue } from './contact-fields.ts';
import { ContactProperties, declaredTypeProblem, type ContactPropertyRow } from './contact-properties.ts';

export const IMPORT_BATCH = 1000;
/** Rejected rows listed in the answer at most; the count covers them all. */
export const MAX_LISTED_ERRORS = 1000;
export type ImportFormat = 'ndjson' | 'csv';
export type OnConflict = 'update' | 'skip';

/** A row to write: null fields were not given (an update keeps what the contact has). */
interface ImportRow {
  email: string;
  first_name: string | null;
  last_name: string | null;
  status: ContactStatus | null;
  properties: Record<string, PropertyValue>;
}

type Parsed = { line: number; row: ImportRow } | { line: number; code: string; message: string };

export interface ImportResult {
  object: 'contact_import';
  rows: number;
  created: number;
  updated: number;
  skipped: number;
  rejected: number;
  errors: { line: number; code: string; message: string }[];
  errors_truncated: boolean;
}

/** Why an import stopped (or read nothing); `line` is the CSV line that could not be read. */
export type ImportRefusal =
  | { reason: 'invalid_csv_header' }
  | { reason: 'invalid_csv'; line: number | undefined; problem: string }
  | { reason: 'payload_too_large'; maxBytes: number }
  | { reason: 'empty_import' };

export type ImportOutcome = { ok: true; result: ImportResult } | { ok: false; refusal: ImportRefusal };

/** Ends the stream or the parse with the refusal; importContacts returns it. */
class ImportRefused extends Error {
  readonly refusal: ImportRefusal;

  constructor(refusal: ImportRefusal) {
    super(refusal.reason);
    this.refusal = refusal;
  }
}

const KNOWN = new Set(['email', 'first_name', 'last_name', 'status', 'properties']);

type Declared = Map<string, ContactPropertyRow>;

/** One contact's fields, checked (a declared property's value must have its type); a string is the reason it is rejected. */
function toRow(input: Record<string, unknown>, declared: Declared): ImportRow | { code: string; message: string } {
  const unstorable = findUnstorable(input);
  if (unstorable) return { code: 'invalid_value', message: `${unstorable.path.slice(1)} ${unstorable.reason}` };
  const unknown = Object.keys(input).find((k) => !KNOWN.has(k));
  if (unknown !== undefined) return { code: 'unknown_field', message: `unknown field "${unknown.slice(0, 80)}" (use properties)` };
  const email = typeof input.email === 'string' ? contactEmail(input.email) : undefined;
  if (!email) return { code: 'invalid_email', message: 'email is missing or not an email address' };
  for (const name of ['first_name', 'last_name'] as const) {
    const v = input[name];
    if (v !== undefined && v !== null && (typeof v !== 'string' || v.length > MAX_NAME)) return { code: 'invalid_name', message: `${name} must be a string of at most ${MAX_NAME} characters` };
  }
  const status = input.status;
  if (status !== undefined && status !== null && !(CONTACT_STATUSES as readonly unknown[]).includes(status)) return { code: 'invalid_status', message: 'status must be subscribed or unsubscribed' };
  const properties = input.properties ?? {};
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) return { code: 'invalid_properties', message: 'properties must be an object' };
  const problem = propertiesProblem(properties as Record<string, unknown>);
  if (problem) return { code: 'invalid_properties', message: problem };
  const mistyped = declaredTypeProblem(properties as Record<string, PropertyValue>, declared);
  if (mistyped) return { code: 'invalid_property_type', message: `property ${mistyped.key} is declared as a ${mistyped.type}` };
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
  return { email, first_name: text(input.first_name), last_name: text(input.last_name), status: (status as ContactStatus | undefined) ?? null, properties: properties as Record<string, PropertyValue> };
}

async function* ndjsonRows(input: Readable, declared: Declared): AsyncGenerator<Parsed> {
  let line = 0;
  for await (const text of createInterface({ input, crlfDelay: Infinity })) {
    line++;
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      yield { line, code: 'invalid_json', message: 'the line is not JSON' };
      continue;
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      yield { line, code: 'invalid_row', message: 'the line is not a JSON object' };
      continue;
    }
    const row = toRow(value as Record<string, unknown>, declared);
    yield 'email' in row ? { line, row } : { line, ...row };
  }
}

/** A CSV cell as the value of a property: a number where the property is declared a number (and the cell reads as one), else the text. */
function csvValue(name: string, cell: string, declared: Declared): PropertyValue {
  if (declared.get(name)?.type !== 'number' || cell.trim() === '') return cell;
  const n = Number(cell.trim());
  return Number.isFinite(n) ? n : cell;
}

async function* csvRows(input: Readable, declared: Declared): AsyncGenerator<Parsed> {
  const parser = input.pipe(parse({ bom: true, relax_column_count: true, skip_empty_lines: true, info: true }));
  // pipe() does not pass errors on: a body over the limit must end the parse too.
  input.on('error', (err) => parser.destroy(err));
  let header: string[] | undefined;
  for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
    const line = info.lines;
    if (!header) {
      header = record.map((h) => h.trim().toLowerCase());
      if (!header.includes('email')) throw new ImportRefused({ reason: 'invalid_csv_header' });
      continue;
    }
    if (record.length !== header.length) {
      yield { line, code: 'wrong_column_count', message: `${record.length} columns where the header has ${header.length}` };
      continue;
    }
    const fields: Record<string, unknown> = {};
    const properties: Record<string, PropertyValue> = {};
    header.forEach((name, i) => {
      const value = record[i]!;
      if (name === 'email' || name === 'first_name' || name === 'last_name' || name === 'status') fields[name] = value.trim() === '' ? undefined : value.trim();
      else if (value !== '') properties[name] = csvValue(name, value, declared);
    });
    const row = toRow({ ...fields, properties }, declared);
    yield 'email' in row ? { line, row } : { line, ...row };
  }
}

/** Passes the body through, refusing it once it is larger than `max` bytes. */
function limited(max: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > max) done(new ImportRefused({ reason: 'payload_too_large', maxBytes: max }));
      else done(null, chunk);
    },
  });
}

// Each batch records one contact event per contact it creates or changes, in the same statement
// (one multi-row insert): Resend sends contact.created / contact.updated per contact too.
const UPSERT = `
WITH input AS (SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[]) AS t(email, first_name, last_name, status, properties)),
updated AS (
  UPDATE mail_contacts c SET first_name = coalesce(i.first_name, c.first_name), last_name = coalesce(i.last_name, c.last_name),
         status = coalesce(i.status, c.status), properties = c.properties || i.properties, updated_at = now()
    FROM input i WHERE c.organization_id = $1 AND c.email = i.email
  RETURNING c.*, 'contact.updated' AS event_type
),
inserted AS (
  INSERT INTO mail_contacts (organization_id, email, first_name, last_name, status, properties)
  SELECT $1, i.email, i.first_name, i.last_name, coalesce(i.status, 'subscribed'), i.properties FROM input i WHERE i.email NOT IN (SELECT email FROM updated)
  ON CONFLICT (organization_id, email) DO NOTHING
  RETURNING *, 'contact.created' AS event_type
),
changed AS (SELECT * FROM updated UNION ALL SELECT * FROM inserted),
${contactEventsCte('changed')}
SELECT (SELECT count(*) FROM inserted)::int AS created, (SELECT count(*) FROM updated)::int AS updated,
       ARRAY(SELECT id FROM contact_events) AS event_ids`;

const INSERT_NEW = `
WITH inserted AS (
  INSERT INTO mail_contacts (organization_id, email, first_name, last_name, status, properties)
  SELECT $1, i.email, i.first_name, i.last_name, coalesce(i.status, 'subscribed'), i.properties
    FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[]) AS i(email, first_name, last_name, status, properties)
  ON CONFLICT (organization_id, email) DO NOTHING
  RETURNING *, 'contact.created' AS event_type
), ${contactEventsCte('inserted')}
SELECT (SELECT count(*) FROM inserted)::int AS created, ARRAY(SELECT id FROM contact_events) AS event_ids`;

/**
 * Imports the rows of `body` in batches; `publishEvents` publishes each batch's contact events as
 * soon as it is written, so a large import does not leave them to the outbox relay, whose backlog
 * every organization's events would wait behind.
 */
export async function importContacts(pg: Pool, organizationId: string, body: Readable, format: ImportFormat, onConflict: OnConflict, maxBytes: number, publishEvents: (ids: string[]) => Promise<void>): Promise<ImportOutcome> {
  try {
    const result = await importRows(pg, organizationId, body, format, onConflict, maxBytes, publishEvents);
    return result.rows === 0 ? { ok: false, refusal: { reason: 'empty_import' } } : { ok: true, result };
  } catch (err) {
    if (err instanceof ImportRefused) return { ok: false, refusal: err.refusal };
    const csv = err as { code?: unknown; lines?: number; message?: string };
    if (typeof csv.code === 'string' && csv.code.startsWith('CSV_')) return { ok: false, refusal: { reason: 'invalid_csv', line: csv.lines, problem: csv.message ?? csv.code } };
    throw err;
  }
}

async function importRows(pg: Pool, organizationId: string, body: Readable, format: ImportFormat, onConflict: OnConflict, maxBytes: number, publishEvents: (ids: string[]) => Promise<void>): Promise<ImportResult> {
  const result: ImportResult = { object: 'contact_import', rows: 0, created: 0, updated: 0, skipped: 0, rejected: 0, errors: [], errors_truncated: false };
  // The organization's declared properties, read once: a row's value of one must have its type.
  const declared = await new ContactProperties(pg).all(organizationId);
  const input = body.pipe(limited(maxBytes));
  body.on('error', (err) => input.destroy(err));
  // Rows of one batch, by address: a later row of the same address in the batch takes its place.
  let batch = new Map<string, ImportRow>();

  const flush = async () => {
    if (batch.size === 0) return;
    const rows = [...batch.values()];
    batch = new Map();
    const params = [organizationId, rows.map((r) => r.email), rows.map((r) => r.first_name), rows.map((r) => r.last_name), rows.map((r) => r.status), rows.map((r) => JSON.stringify(r.properties))];
    if (onConflict === 'update') {
      const { rows: [counts] } = await pg.query<{ created: number; updated: number; event_ids: string[] }>(UPSERT, params);
      result.created += counts!.created;
      result.updated += counts!.updated;
      result.skipped += rows.length - counts!.created - counts!.updated;
      await publishEvents(counts!.event_ids);
    } else {
      const { rows: [counts] } = await pg.query<{ created: number; event_ids: string[] }>(INSERT_NEW, params);
      result.created += counts!.created;
      result.skipped += rows.length - counts!.created;
      await publishEvents(counts!.event_ids);
    }
  };

  for await (const parsed of format === 'csv' ? csvRows(input, declared) : ndjsonRows(input, declared)) {
    result.rows++;
    if ('row' in parsed) {
      const earlier = batch.get(parsed.row.email);
      // The same address twice in a batch: the later row wins; the earlier counts as updated (or skipped).
      if (earlier) result[onConflict === 'update' ? 'updated' : 'skipped']++;
      batch.set(parsed.row.email, parsed.row);
      if (batch.size >= IMPORT_BATCH) await flush();
    } else {
      result.rejected++;
      if (result.errors.length < MAX_LISTED_ERRORS) result.errors.push({ line: parsed.line, code: parsed.code, message: parsed.message });
      else result.errors_truncated = true;
    }
  }
  await flush();
  return result;
}
