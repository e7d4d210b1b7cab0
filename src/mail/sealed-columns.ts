// The mail product's columns kept sealed at rest (the platform's
// secrets/sealed-columns.ts): sending domains' DKIM private keys (domains/domains.ts
// seals them, sending/smtp-handover.ts opens them) and webhook endpoints' signing
// secrets, current and previous (webhooks/mail-webhook-store.ts); `secret`
// before `previous_secret`, which a rotation copies it into (as in links).
import type { SealedColumn } from '../platform/secrets/sealed-columns.ts';

export const mailSealedColumns: readonly SealedColumn[] = [
  { table: 'mail_domains', column: 'dkim_private_key' },
  { table: 'mail_webhook_endpoints', column: 'secret' },
  { table: 'mail_webhook_endpoints', column: 'previous_secret' },
];
