// SECRETS_KEYS: the keys secrets are sealed with, `id:base64key` comma-separated
// (32 random bytes each: `openssl rand -base64 32`). The first seals, every one
// opens, so a rotation adds a new key in front, reseals, then drops the old one
// (docs/operations.md, "The secrets key").
// Unset when NODE_ENV is development or test (and only then), a development key
// is used: it is in this file, so it keeps nothing secret, but a newcomer's
// `npm start` works (run.sh gives a key of the machine's own, .stack/secrets-key),
// and the platform says so at start. Any other NODE_ENV refuses both: a start-up
// error, so a mistyped or forgotten setting never seals with a public key.
// Messages name key ids and positions, never key material.
import { createHash } from 'node:crypto';
import { KEY_BYTES, KEY_ID, type SecretsKey } from './sealed-secrets.ts';

export const DEVELOPMENT_KEY_ID = 'development';
const DEVELOPMENT_KEY = createHash('sha256').update('linkmail development secrets key: not secret').digest();

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** The keys of a SECRETS_KEYS value, or the problems with it (one line each). */
export function parseSecretsKeys(setting: string): { ok: true; keys: SecretsKey[] } | { ok: false; problems: string[] } {
  const problems: string[] = [];
  const keys: SecretsKey[] = [];
  const items = setting.split(',').map((item) => item.trim());
  for (const [i, item] of items.entries()) {
    const at = `SECRETS_KEYS item ${i + 1}`;
    const colon = item.indexOf(':');
    const id = colon < 0 ? '' : item.slice(0, colon);
    const material = colon < 0 ? '' : item.slice(colon + 1);
    const key = Buffer.from(material, 'base64');
    if (!KEY_ID.test(id)) problems.push(`${at}: expected <key id>:<base64 of ${KEY_BYTES} bytes>, the id of letters, digits, ".", "_", "-"`);
    else if (!BASE64.test(material) || key.length !== KEY_BYTES) problems.push(`${at} ("${id}"): the key is not base64 of ${KEY_BYTES} bytes (openssl rand -base64 32)`);
    else if (keys.some((k) => k.id === id)) problems.push(`${at}: key id "${id}" is given twice`);
    else keys.push({ id, key });
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, keys };
}

type KeySettings = { NODE_ENV: string; SECRETS_KEYS: string };

/** Whether this NODE_ENV may seal with the public development key: development and test only. */
export const developmentKeyAllowed = (nodeEnv: string): boolean => nodeEnv === 'development' || nodeEnv === 'test';

const where = (nodeEnv: string) => (nodeEnv === 'production' ? 'production' : `NODE_ENV=${nodeEnv}`);

/** Problems with SECRETS_KEYS in this configuration, for loadConfig (empty when fine). */
export function secretsKeysProblems(config: KeySettings): string[] {
  const allowed = developmentKeyAllowed(config.NODE_ENV);
  if (config.SECRETS_KEYS === '') {
    return allowed ? [] : [`SECRETS_KEYS must be set in ${where(config.NODE_ENV)}: the public development key is used only when NODE_ENV is development or test (<key id>:<base64 of ${KEY_BYTES} bytes>, e.g. k1:$(openssl rand -base64 32))`];
  }
  const parsed = parseSecretsKeys(config.SECRETS_KEYS);
  if (!parsed.ok) return parsed.problems;
  const development = parsed.keys.some((k) => k.id === DEVELOPMENT_KEY_ID || k.key.equals(DEVELOPMENT_KEY));
  return !allowed && development ? [`SECRETS_KEYS must not hold the development key in ${where(config.NODE_ENV)}`] : [];
}

/** The keys this configuration seals and opens with: SECRETS_KEYS, else (NODE_ENV development or test only) the development key. */
export function secretsKeysOf(config: KeySettings): SecretsKey[] {
  if (config.SECRETS_KEYS === '') {
    if (!developmentKeyAllowed(config.NODE_ENV)) throw new Error(secretsKeysProblems(config)[0]);
    return [{ id: DEVELOPMENT_KEY_ID, key: DEVELOPMENT_KEY }];
  }
  const parsed = parseSecretsKeys(config.SECRETS_KEYS);
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  return parsed.keys;
}
