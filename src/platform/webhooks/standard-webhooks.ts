// Standard Webhooks signatures (https://www.standardwebhooks.com), as Resend and
// Svix send them, so that their libraries verify our requests:
//   webhook-id: <message id, the same on every attempt>
//   webhook-timestamp: <unix seconds of the attempt>
//   webhook-signature: v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")> [v1,<…with the previous secret>]
// A secret is "whsec_" + base64 of the key bytes.
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new secret: 24 random bytes, base64, behind the whsec_ prefix. */
export const newStandardSecret = (): string => `${PREFIX}${randomBytes(24).toString('base64')}`;

const keyOf = (secret: string): Buffer => Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');

export function standardSignature(id: string, timestampSeconds: number, body: string, secrets: readonly string[]): string {
  const signed = `${id}.${timestampSeconds}.${body}`;
  return secrets.map((s) => `v1,${createHmac('sha256', keyOf(s)).update(signed).digest('base64')}`).join(' ');
}

/** The three headers of one attempt. */
export function standardWebhookHeaders(id: string, body: string, secrets: readonly string[], nowSeconds = Math.floor(Date.now() / 1000)): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(nowSeconds),
    'webhook-signature': standardSignature(id, nowSeconds, body, secrets),
  };
}
