// Per-message return paths (VERP): every message goes out with the envelope sender
// bounces+<message id>-<signature>@<bounce domain>, so a bounce that comes back to
// that address names its message without trusting anything the report says, and
// nobody can make such an address for a message without MAIL_LINK_SECRET. The
// signature is lower-case hex: mail systems may change the case of a local part.
import { createHmac, timingSafeEqual } from 'node:crypto';

const PREFIX = 'bounces+';
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
/** 64 bits: a local part stays within 64 characters (8 + 36 + 1 + 16). */
const SIGNATURE_HEX = 16;
const RETURN_PATH = new RegExp(`^bounces\\+(${UUID})-([0-9a-f]+)@`, 'i');

const signature = (secret: string, messageId: string): string =>
  createHmac('sha256', secret).update(`verp.${messageId.toLowerCase()}`).digest('hex').slice(0, SIGNATURE_HEX);

/** The envelope sender of a message. */
export const returnPath = (secret: string, messageId: string, domain: string): string => `${PREFIX}${messageId}-${signature(secret, messageId)}@${domain}`;

/**
 * What an address a report was sent to says: `none` when it is no return path of ours,
 * `forged` when it looks like one without our signature, else the message it names.
 */
export function readReturnPath(secret: string, address: string): { kind: 'none' } | { kind: 'forged' } | { kind: 'message'; messageId: string } {
  if (!address.toLowerCase().startsWith(PREFIX)) return { kind: 'none' };
  const m = RETURN_PATH.exec(address);
  if (!m) return { kind: 'forged' };
  const messageId = m[1]!.toLowerCase();
  const given = Buffer.from(m[2]!.toLowerCase());
  const expected = Buffer.from(signature(secret, messageId));
  return given.length === expected.length && timingSafeEqual(given, expected) ? { kind: 'message', messageId } : { kind: 'forged' };
}
