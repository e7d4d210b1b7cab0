// The link product's columns kept sealed at rest (the platform's
// secrets/sealed-columns.ts): webhook endpoints' signing secrets, current and
// previous, which webhooks/webhook-store.ts seals and opens. `secret` comes
// before `previous_secret`: a rotation during a reseal copies the secret into
// previous_secret, so that column is walked after the one it copies from, and its
// values are bound (sealed-secrets.ts) as the row's `secret`, which they were.
import type { SealedColumn } from '../platform/secrets/sealed-columns.ts';

export const LINK_WEBHOOK_SECRET: SealedColumn = { table: 'webhook_endpoints', column: 'secret' };

export const linkSealedColumns: readonly SealedColumn[] = [
  LINK_WEBHOOK_SECRET,
  { table: 'webhook_endpoints', column: 'previous_secret', boundAs: 'secret' },
];
