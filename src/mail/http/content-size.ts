// The spec's 2 MB limit on each of html and text, shared by templates and broadcasts
// (POST /emails checks its items in prepare-message.ts, with per-item paths).
import { ApiError } from '../../platform/http/errors.ts';
import { MAX_PART_BYTES } from '../emails/email-schemas.ts';

/** Refuses with 400 content_too_large when html or text is over 2 MB (UTF-8). */
export function checkPartSizes(content: { html?: string | null; text?: string | null }): void {
  for (const part of ['html', 'text'] as const) {
    const value = content[part];
    if (typeof value === 'string' && Buffer.byteLength(value) > MAX_PART_BYTES) throw new ApiError(400, 'content_too_large', `${part} is larger than 2 MB.`, [{ path: `/${part}`, message: 'larger than 2 MB' }]);
  }
}
