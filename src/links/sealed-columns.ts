// The link product's columns kept sealed at rest (the platform's
// secrets/sealed-columns.ts): webhook endpoints' signing secrets, current and
// previous, which webhooks/webhook-store.ts seals and opens. `secret` comes
// before `previous_secret`: a rotation during a reseal copies the secret into
// previous_secret, so that column is walked after the one it copies from.
import type { SealedColumn } from '../platform/secrets/sealed-columns.ts';

export const linkSealedColumns: readonly SealedColumn[] = [
  { table: 'webhook_endpoints', column: 'secret' },
  { table: 'webhook_endpoints', column: 'previous_secret' },
];
