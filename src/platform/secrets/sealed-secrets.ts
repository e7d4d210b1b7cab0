// Secrets kept sealed at rest (DKIM private keys, webhook signing secrets):
// AES-256-GCM under one of the operator's keys (SECRETS_KEYS, secrets-keys.ts),
// stored as text that names its key:
//
//   sealed:v1:<key id>:<12-byte IV, base64url>:<ciphertext and 16-byte tag, base64url>
//
// Text, so the columns stay `text` and a sealed value is told from a clear one
// (a PEM, a whsec_…) by its prefix, in code and in SQL. The key id, so values
// sealed under an older key still open after the first key changes (rotation),
// a rotation finds the values not yet under the first key, and a value under a
// key no longer given is named as such instead of failing as a bad tag. The
// header `sealed:v1:<key id>` is GCM's additional data: a value whose version or
// key id was edited does not open. `v1` leaves room for another scheme later.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** One key of SECRETS_KEYS: its id (letters, digits, `.`, `_`, `-`) and 32 bytes. */
export interface SecretsKey {
  id: string;
  key: Buffer;
}

const PREFIX = 'sealed:';
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const KEY_BYTES = 32;
export const KEY_ID = /^[A-Za-z0-9._-]{1,40}$/;

/** Whether a stored value is sealed (any key), rather than a clear value written before sealing. */
export const isSealed = (stored: string): boolean => stored.startsWith(PREFIX);

/** The text every value sealed under this key starts with (for SQL's starts_with). */
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

  /** The value sealed under the current key: a fresh IV each time, so equal values look different. */
  seal(value: string): string {
    const header = `${PREFIX}${VERSION}:${this.currentKeyId}`;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.currentKeyId)!, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(header));
    const sealed = Buffer.concat([cipher.update(value, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${header}:${iv.toString('base64url')}:${sealed.toString('base64url')}`;
  }

  /**
   * The clear value. A value that is not sealed is returned as it is: it was written in clear
   * by a process of an earlier release (during a rolling upgrade), and the next start or
   * reseal run seals it (sealed-columns.ts). The errors name the key, never the value.
   */
  open(stored: string): string {
    if (!isSealed(stored)) return stored;
    const parts = stored.split(':');
    const [, version, keyId, ivText, sealedText] = parts;
    if (parts.length !== 5 || version !== VERSION || !keyId || !ivText || !sealedText) throw new Error('a sealed secret is malformed (expected sealed:v1:<key id>:<iv>:<ciphertext>)');
    const key = this.keys.get(keyId);
    if (!key) throw new Error(`a secret is sealed under key id "${keyId}", which SECRETS_KEYS does not hold`);
    const iv = Buffer.from(ivText, 'base64url');
    const sealed = Buffer.from(sealedText, 'base64url');
    if (iv.length !== IV_BYTES || sealed.length < TAG_BYTES) throw new Error(`a secret sealed under key id "${keyId}" is malformed`);
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(`${PREFIX}${version}:${keyId}`));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new Error(`a secret sealed under key id "${keyId}" does not open: it was altered, or SECRETS_KEYS gives another key under that id`);
    }
  }

  /** open() for a column that may be NULL. */
  openNullable(stored: string | null): string | null {
    return stored === null ? null : this.open(stored);
  }
}
