// Short IDs: the path of a short link. Caller-chosen IDs are 3 to 64 characters
// of letters, digits, '-' and '_', starting with a letter or digit, and not a
// path the service itself uses. Assigned IDs are 7 random base62 characters
// (62^7 ≈ 3.5·10^12), retried on the rare collision.
import { randomBytes } from 'node:crypto';

export const SHORT_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{2,63}$';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const ASSIGNED_LENGTH = 7;

/** Root paths a short link cannot take: the service's own (the server's ReservedPaths, derived from its routes). */
export interface ReservedShortIds {
  has(shortId: string): boolean;
}

export function assignShortId(): string {
  let out = '';
  while (out.length < ASSIGNED_LENGTH) {
    for (const byte of randomBytes(16)) {
      if (byte < 248 && out.length < ASSIGNED_LENGTH) out += ALPHABET[byte % 62];
    }
  }
  return out;
}
