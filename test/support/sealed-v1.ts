// The sealing of releases before values were bound to their row (sealed:v1): GCM's additional
// data was the header `sealed:v1:<key id>` alone. Tests make such values to check that they
// still open and that the reseal command upgrades them to v2.
import { createCipheriv, randomBytes } from 'node:crypto';
import type { SecretsKey } from '../../src/platform/secrets/sealed-secrets.ts';

export function sealV1(value: string, { id, key }: SecretsKey): string {
  const header = `sealed:v1:${id}`;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(header));
  const sealed = Buffer.concat([cipher.update(value, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${header}:${iv.toString('base64url')}:${sealed.toString('base64url')}`;
}
