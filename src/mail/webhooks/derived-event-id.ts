// A webhook event id made from a mail event's id and a name (RFC 4122 version 5
// layout over SHA-1): the same inputs always give the same id, so a webhook
// event that has no mail_events row of its own (email.sent, from `delivered`)
// keeps one webhook-id across re-reads of mail.events, retries and replays.
import { createHash } from 'node:crypto';

export function derivedEventId(eventId: string, name: string): string {
  const hash = createHash('sha1').update(`${eventId.toLowerCase()}/${name}`).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
