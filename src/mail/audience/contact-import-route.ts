// POST /api/v1/contacts/import: the body is streamed to the import (contact-import.ts),
// never buffered: this context parses text/csv and application/x-ndjson as the raw
// request stream.
import { Type } from '@sinclair/typebox';
import type { Readable } from 'node:stream';
import { addComponents } from '../../platform/http/components.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import { StringEnum } from '../../platform/http/schema-types.ts';
import type { App } from '../../platform/http/server.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { MAIL_ERRORS, mailErrorResponses } from '../http/mail-errors.ts';
import type { MailEventOutbox } from '../events/mail-events.ts';
import { importContacts, MAX_LISTED_ERRORS, type ImportFormat, type ImportRefusal, type OnConflict } from './contact-import.ts';

const FORMATS: Record<string, ImportFormat> = { 'text/csv': 'csv', 'application/x-ndjson': 'ndjson', 'application/ndjson': 'ndjson' };

const ImportResultSchema = Type.Object(
  {
    object: Type.Literal('contact_import'),
    rows: Type.Integer({ description: 'Rows read (without the CSV header and blank lines).' }),
    created: Type.Integer(),
    updated: Type.Integer(),
    skipped: Type.Integer({ description: 'Existing contacts left alone (on_conflict=skip).' }),
    rejected: Type.Integer(),
    errors: Type.Array(Type.Object({ line: Type.Integer(), code: Type.String(), message: Type.String() }), { description: `The rejected rows, the first ${MAX_LISTED_ERRORS}.` }),
    errors_truncated: Type.Boolean(),
  },
  { $id: 'ContactImport', title: 'ContactImport' },
);

function importRefusalError(r: ImportRefusal): ApiError {
  switch (r.reason) {
    case 'invalid_csv_header': return new ApiError(400, r.reason, 'The CSV header row must name an email column.');
    case 'invalid_csv': return new ApiError(400, r.reason, `The CSV cannot be read at line ${r.line ?? '?'}: ${r.problem}`);
    case 'payload_too_large': return new ApiError(413, r.reason, `The import is larger than ${r.maxBytes} bytes; split it.`);
    case 'empty_import': return new ApiError(400, r.reason, 'The import holds no rows.');
  }
}

export async function contactImportRoute(app: App, deps: { pg: Pool; maxBytes: number; events: MailEventOutbox }): Promise<void> {
  await app.register(async (scope) => {
    scope.addContentTypeParser(Object.keys(FORMATS), (_request, payload, done) => done(null, payload));
    addComponents(scope, [ImportResultSchema]);
    scope.post('/contacts/import', {
      config: { mailAccess: 'manage' },
      schema: {
        tags: ['contacts'], operationId: 'importContacts', summary: 'Import contacts (NDJSON or CSV, streamed)',
        description: 'Content-Type `application/x-ndjson` (one contact object per line: email, first_name, last_name, status, properties) or `text/csv` ' +
          '(a header row naming email, first_name, last_name, status; any other column is a property). `on_conflict=update` (default) updates the given fields of existing contacts and merges their properties; `skip` leaves them alone. ' +
          'Rows are written in batches of 1000 as the body arrives; a bad row is rejected alone and listed with its line.',
        querystring: Type.Object({ on_conflict: Type.Optional(StringEnum(['update', 'skip'] as const, { default: 'update' })) }, { additionalProperties: false }),
        response: { 200: withRateLimitHeaders(ImportResultSchema, 'What the import did.'), ...mailErrorResponses(...MAIL_ERRORS, 400, 413, 415) },
      },
    }, async (request) => {
      const format = FORMATS[(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase()];
      if (!format || !request.body) throw new ApiError(415, 'unsupported_media_type', 'Send the import as text/csv or application/x-ndjson.');
      const outcome = await importContacts(deps.pg, request.mailAuth.organizationId, request.body as Readable, format, (request.query as { on_conflict?: OnConflict }).on_conflict ?? 'update', deps.maxBytes, (ids) => deps.events.publish(ids));
      if (!outcome.ok) throw importRefusalError(outcome.refusal);
      return outcome.result;
    });
  });
}
