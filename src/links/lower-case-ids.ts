// Ids arrive in any case (a UUID is case-insensitive) but are stored and
// compared in lower case: Postgres compares uuids, ClickHouse compares text, so
// an upper-case id would find the link and then none of its scans. Every id a
// client sends to the link API (path, query string, JSON body, at any depth) is
// lower-cased before validation, so handlers only ever see one form.
import type { FastifyRequest } from 'fastify';
import { UUID_PATTERN } from '../platform/http/validation.ts';

/** The names the link API gives its UUID fields (path, query and body alike). */
const ID_FIELDS = new Set(['id', 'linkId', 'campaignId', 'workspaceId', 'keyId', 'endpointId', 'deliveryId']);
/** Free-form values the client owns, left as sent. */
const CLIENT_DATA = new Set(['metadata']);

function lowerIds(value: unknown, depth = 0): void {
  if (depth > 5 || value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) lowerIds(item, depth + 1);
    return;
  }
  const record = value as Record<string, unknown>;
  for (const [key, field] of Object.entries(record)) {
    if (typeof field === 'string') {
      if (ID_FIELDS.has(key) && UUID_PATTERN.test(field)) record[key] = field.toLowerCase();
    } else if (!CLIENT_DATA.has(key)) lowerIds(field, depth + 1);
  }
}

/** A preValidation hook: lower-cases the UUIDs of the request's params, query and body. */
export async function lowerCaseIds(request: FastifyRequest): Promise<void> {
  lowerIds(request.params);
  lowerIds(request.query);
  lowerIds(request.body);
}
