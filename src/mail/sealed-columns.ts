// The mail product's columns kept sealed at rest (the platform's
// secrets/sealed-columns.ts): sending domains' DKIM private keys (domains/domains.ts
// seals them, sending/smtp-handover.ts opens them) and webhook endpoints' signing
// secrets, current and previous (webhooks/mail-webhook-store.ts); `secret`
// before `previous_secret`, which a rotation copies it into (as in links), bound as `secret`.
import type { SealedColumn } from '../platform/secrets/sealed-columns.ts';

export const DKIM_PRIVATE_KEY: SealedColumn = { table: 'mail_domains', column: 'dkim_private_key' };
export const MAIL_WEBHOOK_SECRET: SealedColumn = { table: 'mail_webhook_endpoints', column: 'secret' };

export const mailSealedColumns: readonly SealedColumn[] = [
  DKIM_PRIVATE_KEY,
  MAIL_WEBHOOK_SECRET,
  { table: 'mail_webhook_endpoints', column: 'previous_secret', boundAs: 'secret' },
];
