// The signature of a webhook request, header `x-service-signature`:
//   t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<exact body>")>[,v1=<hex with the previous secret>]
// The timestamp is signed with the body, so a receiver that checks its age
// rejects replays; a second v1 appears while a rotated-out secret is still
// in its grace period. examples/verify-webhook-signature.mjs verifies it.
import { createHmac } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-service-signature';

export function signatureHeader(body: string, secrets: readonly string[], nowSeconds = Math.floor(Date.now() / 1000)): string {
  const signed = `${nowSeconds}.${body}`;
  return [`t=${nowSeconds}`, ...secrets.map((s) => `v1=${createHmac('sha256', s).update(signed).digest('hex')}`)].join(',');
}

/** The headers of one attempt of a scan.created delivery: the signature, the event, the delivery and its attempt number. */
export function linkAttemptHeaders(delivery: { id: string; event_type: string; attempts: number; body: string; secrets: readonly string[] }): Record<string, string> {
  return {
    [SIGNATURE_HEADER]: signatureHeader(delivery.body, delivery.secrets),
    'x-service-event': delivery.event_type,
    'x-service-delivery': delivery.id,
    'x-service-attempt': String(delivery.attempts),
  };
}
