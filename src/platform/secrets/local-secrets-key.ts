// A development machine's secrets key: made once (32 random bytes) and kept in
// the local state folder (.stack/secrets-key), so that every run of
// infra/local/run.sh seals and opens stored secrets with the same key, as a
// deployment does with its SECRETS_KEYS. Never used in production (run.sh asks
// for it only outside production).
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const LOCAL_KEY_FILE = 'secrets-key';

/** The kept SECRETS_KEYS value (`local:<base64>`), made on first use; written readable by its owner only. */
export function localSecretsKeys(dir: string): string {
  const file = join(dir, LOCAL_KEY_FILE);
  const kept = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  if (kept) return kept;
  const value = `local:${randomBytes(32).toString('base64')}`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, `${value}\n`, { mode: 0o600 });
  return value;
}
