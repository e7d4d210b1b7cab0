// POST /api/v1/links/import: a text/csv body streamed to the import (link-import.ts),
// never buffered: this context parses text/csv as the raw request stream.
import { Type } from '@sinclair/typebox';
import type { Readable } from 'node:stream';
import { addComponents } from '../../platform/http/components.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { API_ERRORS, errorResponses, withRateLimitHeaders } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import type { FastifyRequest } from 'fastify';
import { IMPORT_BATCH, importLinks, MAX_IMPORT_ROWS, MAX_LISTED_ERRORS, type LinkImportDeps, type LinkImportRefusal } from './link-import.ts';

const LinkImportResult = Type.Object(
  {
    created: Type.Integer({ description: 'Links created.' }),
    skipped: Type.Integer({ description: 'Blank lines, and rows repeating an earlier row of the file exactly (after trimming cells): not links, not errors.' }),
    rejected: Type.Integer({ description: 'Rows refused, each for the reason POST /api/v1/links would give (a taken short ID: short_id_taken).' }),
    errors: Type.Array(Type.Object({ line: Type.Integer({ description: 'CSV line of the row; the header is line 1.' }), code: Type.String() }), { description: `The rejected rows, the first ${MAX_LISTED_ERRORS}.` }),
  },
  { $id: 'LinkImportResult', title: 'LinkImportResult' },
);

function refusalError(r: LinkImportRefusal): ApiError {
  switch (r.reason) {
    case 'missing_destination_column': return new ApiError(400, r.reason, 'The CSV header row must name a destination column (destination, long_url or longUrl).');
    case 'invalid_csv': return new ApiError(400, r.reason, `The CSV cannot be read at line ${r.line ?? '?'}: ${r.problem}`);
    case 'too_many_rows': return new ApiError(413, r.reason, `An import takes at most ${r.max} rows, blank lines included; split the file. Nothing was imported.`);
    case 'import_too_large': return new ApiError(413, r.reason, `An import takes at most ${r.maxBytes} bytes; split the file. Nothing was imported.`);
    case 'empty_import': return new ApiError(400, r.reason, 'The CSV holds no rows under its header.');
    case 'import_running': return new ApiError(409, r.reason, 'Another import of this workspace is running; send this one when it has answered.');
    case 'import_stalled': return new ApiError(408, r.reason, r.why === 'paused'
      ? `The body paused more than ${r.ms} ms; send it without pauses. Nothing was imported.`
      : `The upload took more than ${r.ms} ms; split the file. Nothing was imported.`);
  }
}

/**
 * A refusal answered before the body has ended closes the connection after the answer: the rest
 * of the body (of a client that paused, or sends too much) is not waited for.
 */
function refusedUnread(request: FastifyRequest, error: ApiError): ApiError {
  if (request.raw.complete) return error;
  return new ApiError(error.statusCode, error.code, error.message, error.details, { ...error.headers, connection: 'close' });
}

export async function linkImportRoute(app: App, deps: LinkImportDeps): Promise<void> {
  await app.register(async (scope) => {
    // Only text/csv is read; any other type (application/json too, whatever its body) is left
    // unread and answered 415 by the route, not parsed as JSON first (400 invalid_json).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('text/csv', (_request, payload, done) => done(null, payload));
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    addComponents(scope, [LinkImportResult]);
    scope.post('/links/import', {
      schema: {
        tags: ['links'], operationId: 'importLinks', summary: 'Import links from CSV (streamed)',
        description: `Content-Type \`text/csv\` with a header row naming the columns: \`destination\` (also \`long_url\`, Bitly's export, or \`longUrl\`, Shlink's), ` +
          '`shortId` (also `shortCode`), `tags` (`;`-separated), `title`, `expiresAt` (ISO 8601); other columns are ignored. Each row is checked as POST /api/v1/links checks a link and goes on the ' +
          `workspace's default domain; a taken short ID rejects the row, never overwrites. Up to ${MAX_IMPORT_ROWS} rows, blank lines included (more: 413 too_many_rows), and ` +
          'LINK_IMPORT_MAX_BYTES (413 import_too_large); a body that pauses longer than LINK_IMPORT_STALL_TIMEOUT_MS or takes longer than LINK_IMPORT_DEADLINE_MS: 408 import_stalled. ' +
          `Rows are staged ${IMPORT_BATCH} at a time as the body arrives and created in one transaction at its end: a refused import creates nothing. ` +
          'One import at a time per workspace (409 import_running). Each created link is on links.changelog and sends link.created.',
        response: { 200: withRateLimitHeaders(LinkImportResult, 'What the import did.'), ...errorResponses(...API_ERRORS, 408, 409, 413, 415) },
      },
    }, async (request) => {
      if (!request.body || typeof (request.body as Readable).pipe !== 'function') throw new ApiError(415, 'unsupported_media_type', 'Send the import as text/csv.');
      if (Number(request.headers['content-length']) > deps.limits.maxBytes) throw refusedUnread(request, refusalError({ reason: 'import_too_large', maxBytes: deps.limits.maxBytes }));
      const outcome = await importLinks(deps, request.linksAuth.workspaceId, request.body as Readable);
      if (!outcome.ok) throw refusedUnread(request, refusalError(outcome.refusal));
      return outcome.result;
    });
  });
}
