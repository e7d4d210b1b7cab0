// Secrets kept sealed at rest (DKIM private keys, webhook signing secrets):
// AES-256-GCM under one of the operator's keys (SECRETS_KEYS, secrets-keys.ts),
// stored as text that names its key:
//
//   sealed:v2:<key id>:<12-byte IV, base64url>:<ciphertext and 16-byte tag, base64url>
//
// Text, so the columns stay `text` and a sealed value is told from a clear one
// (a PEM, a whsec_…) by its prefix, in code and in SQL. The key id, so values
// sealed under an older key still open after the first key changes (rotation),
// a rotation finds the values not yet under the first key, and a value under a
// key no longer given is named as such instead of failing as a bad tag.
// GCM's additional data is the header `sealed:v2:<key id>` and where the value is
// stored (SealedAt: table, column, row id): a value whose version or key id was
// edited does not open, nor one copied into another row (another organization's),
// column or table. `v1` values (the header alone was authenticated) still open, so
// a database written before v2 reads the same; new values are v2, and the reseal
// command (src/reseal-secrets.ts) rewrites v1 values as v2.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** One key of SECRETS_KEYS: its id (letters, digits, `.`, `_`, `-`) and 32 bytes. */
export interface SecretsKey {
  id: string;
  key: Buffer;
}

/**
 * Where a sealed value is stored, which a v2 value is bound to. `column` is the column whose value
 * it is: a previous signing secret, copied by SQL from `secret` at a rotation, is bound as `secret`.
 */
export interface SealedAt {
  table: string;
  column: string;
  id: string;
}

const PREFIX = 'sealed:';
const VERSION = 'v2';
/** Sealed before values were bound to their row: opened, never written. */
const LEGACY_VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const KEY_BYTES = 32;
export const KEY_ID = /^[A-Za-z0-9._-]{1,40}$/;

/** Whether a stored value is sealed (any key), rather than a clear value written before sealing. */
export const isSealed = (stored: string): boolean => stored.startsWith(PREFIX);

/** The text every value sealed now under this key starts with (v2; for SQL's starts_with). */
export const sealedPrefix = (keyId: string): string => `${PREFIX}${VERSION}:${keyId}:`;

/** The key id a sealed value names; undefined for a clear value. */
export function keyIdOf(stored: string): string | undefined {
  if (!isSealed(stored)) return undefined;
  return stored.split(':')[2];
}

export class SealedSecrets {
  /** The key new values are sealed with: the first of SECRETS_KEYS. */
  readonly currentKeyId: string;
  private readonly keys: Map<string, Buffer>;

  constructor(keys: readonly SecretsKey[]) {
    const first = keys[0];
    if (!first) throw new Error('SealedSecrets needs at least one key');
    for (const { id, key } of keys) {
      if (!KEY_ID.test(id)) throw new Error(`secrets key id "${id}" is not valid (letters, digits, ".", "_", "-")`);
      if (key.length !== KEY_BYTES) throw new Error(`secrets key "${id}" is not ${KEY_BYTES} bytes`);
    }
    this.currentKeyId = first.id;
    this.keys = new Map(keys.map((k) => [k.id, k.key]));
    if (this.keys.size !== keys.length) throw new Error('SECRETS_KEYS names a key id twice');
  }

  /** Whether values sealed under this key id open here. */
  hasKey(keyId: string): boolean {
    return this.keys.has(keyId);
  }

  /** The value sealed under the current key, bound to where it is stored: a fresh IV each time, so equal values look different. */
  seal(value: string, at: SealedAt): string {
    const header = `${PREFIX}${VERSION}:${this.currentKeyId}`;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.currentKeyId)!, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(additionalData(header, at));
    const sealed = Buffer.concat([cipher.update(value, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${header}:${iv.toString('base64url')}:${sealed.toString('base64url')}`;
  }

  /**
   * The clear value. A value that is not sealed is returned as it is: it was written in clear
   * by a process of an earlier release (during a rolling upgrade), and the next start or
   * reseal run seals it (sealed-columns.ts). `at`: where it was read from; a v2 value sealed
   * for another place does not open. The errors name the key and the place, never the value.
   */
  open(stored: string, at: SealedAt): string {
    if (!isSealed(stored)) return stored;
    const parts = stored.split(':');
    const [, version, keyId, ivText, sealedText] = parts;
    if (parts.length !== 5 || (version !== VERSION && version !== LEGACY_VERSION) || !keyId || !ivText || !sealedText) throw new Error('a sealed secret is malformed (expected sealed:v2:<key id>:<iv>:<ciphertext>)');
    const key = this.keys.get(keyId);
    if (!key) throw new Error(`a secret is sealed under key id "${keyId}", which SECRETS_KEYS does not hold`);
    const iv = Buffer.from(ivText, 'base64url');
    const sealed = Buffer.from(sealedText, 'base64url');
    if (iv.length !== IV_BYTES || sealed.length < TAG_BYTES) throw new Error(`a secret sealed under key id "${keyId}" is malformed`);
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    const header = `${PREFIX}${version}:${keyId}`;
    decipher.setAAD(version === LEGACY_VERSION ? Buffer.from(header) : additionalData(header, at));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new Error(`a secret sealed under key id "${keyId}" does not open as ${placeOf(at)}: it was altered, copied from another row or column, or SECRETS_KEYS gives another key under that id`);
    }
  }

  /** open() for a column that may be NULL. */
  openNullable(stored: string | null, at: SealedAt): string | null {
    return stored === null ? null : this.open(stored, at);
  }
}

const placeOf = ({ table, column, id }: SealedAt): string => `${table}.${column} of row ${id}`;

/** GCM's additional data of a v2 value: its header and its place (names from code, ids of rows; `|` in neither). */
function additionalData(header: string, { table, column, id }: SealedAt): Buffer {
  if (!id) throw new Error(`a secret of ${table}.${column} is sealed or opened without its row id`);
  return Buffer.from(`${header}|${table}|${column}|${id}`);
}
