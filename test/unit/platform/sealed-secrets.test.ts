// Sealing stored secrets (src/platform/secrets/sealed-secrets.ts): AES-256-GCM under the
// first of several keys, each value naming its key.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isSealed, keyIdOf, SealedSecrets, type SecretsKey } from '../../../src/platform/secrets/sealed-secrets.ts';

const key = (id: string): SecretsKey => ({ id, key: randomBytes(32) });
const PEM = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n';

/** The sealed value with one of its five parts changed. */
function withPart(sealed: string, index: number, change: (part: string) => string): string {
  const parts = sealed.split(':');
  parts[index] = change(parts[index]!);
  return parts.join(':');
}

describe('sealed secrets', () => {
  it('seal and open round trip, and the sealed text shows neither the value nor its prefix', () => {
    const secrets = new SealedSecrets([key('k1')]);
    for (const value of [PEM, 'whsec_' + randomBytes(24).toString('base64'), '', 'é ✓ \u0000']) {
      const sealed = secrets.seal(value);
      expect(sealed).toMatch(/^sealed:v1:k1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$/);
      expect(sealed).not.toContain('BEGIN');
      expect(sealed).not.toContain('whsec_');
      expect(isSealed(sealed)).toBe(true);
      expect(keyIdOf(sealed)).toBe('k1');
      expect(secrets.open(sealed)).toBe(value);
    }
  });

  it('seals the same value differently each time (a fresh IV)', () => {
    const secrets = new SealedSecrets([key('k1')]);
    expect(secrets.seal('whsec_same')).not.toBe(secrets.seal('whsec_same'));
  });

  it('seals with the first key and opens under any of them', () => {
    const [k1, k2, k3] = [key('k1'), key('k2'), key('k3')];
    const underK2 = new SealedSecrets([k2]).seal('two');
    const underK3 = new SealedSecrets([k3]).seal('three');
    const ring = new SealedSecrets([k1, k2, k3]);
    expect(ring.currentKeyId).toBe('k1');
    expect(keyIdOf(ring.seal('one'))).toBe('k1');
    expect(ring.open(underK2)).toBe('two');
    expect(ring.open(underK3)).toBe('three');
  });

  it('names the key id of a value sealed under a key it does not hold, and never the value', () => {
    const sealed = new SealedSecrets([key('old-2025')]).seal(PEM);
    const secrets = new SealedSecrets([key('new-2026')]);
    expect(() => secrets.open(sealed)).toThrow('a secret is sealed under key id "old-2025", which SECRETS_KEYS does not hold');
    expect(secrets.hasKey('old-2025')).toBe(false);
  });

  it('refuses a value opened with another key under the same id', () => {
    const sealed = new SealedSecrets([key('k1')]).seal('whsec_x');
    expect(() => new SealedSecrets([key('k1')]).open(sealed)).toThrow(/sealed under key id "k1" does not open: it was altered, or SECRETS_KEYS gives another key under that id/);
  });

  it('refuses a tampered value: ciphertext, IV, tag, or the key id in its header (GCM additional data)', () => {
    const [k1, k2] = [key('k1'), key('k2')];
    const secrets = new SealedSecrets([k1, k2]);
    const sealed = secrets.seal('whsec_abcdef');
    const flip = (text: string, at: number) => {
      const bytes = Buffer.from(text, 'base64url');
      bytes[at] = bytes[at]! ^ 1;
      return bytes.toString('base64url');
    };
    expect(() => secrets.open(withPart(sealed, 4, (p) => flip(p, 0)))).toThrow(/does not open/);
    expect(() => secrets.open(withPart(sealed, 4, (p) => flip(p, Buffer.from(p, 'base64url').length - 1)))).toThrow(/does not open/);
    expect(() => secrets.open(withPart(sealed, 3, (p) => flip(p, 0)))).toThrow(/does not open/);
    // The same bytes relabelled as k2's, with k1's key material given under the id k2: the header is authenticated.
    const relabelled = withPart(sealed, 2, () => 'k2');
    expect(() => new SealedSecrets([{ id: 'k2', key: k1.key }]).open(relabelled)).toThrow(/sealed under key id "k2" does not open/);
  });

  it('refuses malformed sealed values with a plain error', () => {
    const secrets = new SealedSecrets([key('k1')]);
    const sealed = secrets.seal('x');
    for (const bad of ['sealed:', 'sealed:v2:k1:a:b', `${sealed}:extra`, withPart(sealed, 3, () => 'AAAA'), withPart(sealed, 4, () => 'AA')]) {
      expect(() => secrets.open(bad)).toThrow(/malformed/);
    }
  });

  it('opens a clear value (written before sealing) as it is', () => {
    const secrets = new SealedSecrets([key('k1')]);
    expect(isSealed(PEM)).toBe(false);
    expect(keyIdOf(PEM)).toBeUndefined();
    expect(secrets.open(PEM)).toBe(PEM);
    expect(secrets.openNullable(null)).toBeNull();
  });

  it('refuses bad keys: none, a short one, an id twice, an id with a colon', () => {
    expect(() => new SealedSecrets([])).toThrow(/at least one key/);
    expect(() => new SealedSecrets([{ id: 'k1', key: randomBytes(16) }])).toThrow(/not 32 bytes/);
    expect(() => new SealedSecrets([key('k1'), key('k1')])).toThrow(/twice/);
    expect(() => new SealedSecrets([key('a:b')])).toThrow(/not valid/);
  });
});
