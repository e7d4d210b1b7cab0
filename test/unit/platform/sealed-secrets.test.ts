// Sealing stored secrets (src/platform/secrets/sealed-secrets.ts): AES-256-GCM under the
// first of several keys, each value naming its key and bound to its row, column and table (v2);
// values sealed before that binding (v1) still open.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isSealed, keyIdOf, SealedSecrets, type SealedAt, type SecretsKey } from '../../../src/platform/secrets/sealed-secrets.ts';
import { sealV1 } from '../../support/sealed-v1.ts';

const key = (id: string): SecretsKey => ({ id, key: randomBytes(32) });
/** Where the values of these tests are stored. */
const AT: SealedAt = { table: 'mail_webhook_endpoints', column: 'secret', id: '0b0e5a2e-8f4c-4a57-9a53-1d1f0f1e2a01' };
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
      const sealed = secrets.seal(value, AT);
      expect(sealed).toMatch(/^sealed:v2:k1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$/);
      expect(sealed).not.toContain('BEGIN');
      expect(sealed).not.toContain('whsec_');
      expect(isSealed(sealed)).toBe(true);
      expect(keyIdOf(sealed)).toBe('k1');
      expect(secrets.open(sealed, AT)).toBe(value);
    }
  });

  it('seals the same value differently each time (a fresh IV)', () => {
    const secrets = new SealedSecrets([key('k1')]);
    expect(secrets.seal('whsec_same', AT)).not.toBe(secrets.seal('whsec_same', AT));
  });

  it('seals with the first key and opens under any of them', () => {
    const [k1, k2, k3] = [key('k1'), key('k2'), key('k3')];
    const underK2 = new SealedSecrets([k2]).seal('two', AT);
    const underK3 = new SealedSecrets([k3]).seal('three', AT);
    const ring = new SealedSecrets([k1, k2, k3]);
    expect(ring.currentKeyId).toBe('k1');
    expect(keyIdOf(ring.seal('one', AT))).toBe('k1');
    expect(ring.open(underK2, AT)).toBe('two');
    expect(ring.open(underK3, AT)).toBe('three');
  });

  it('names the key id of a value sealed under a key it does not hold, and never the value', () => {
    const sealed = new SealedSecrets([key('old-2025')]).seal(PEM, AT);
    const secrets = new SealedSecrets([key('new-2026')]);
    expect(() => secrets.open(sealed, AT)).toThrow('a secret is sealed under key id "old-2025", which SECRETS_KEYS does not hold');
    expect(secrets.hasKey('old-2025')).toBe(false);
  });

  it('refuses a value opened with another key under the same id', () => {
    const sealed = new SealedSecrets([key('k1')]).seal('whsec_x', AT);
    expect(() => new SealedSecrets([key('k1')]).open(sealed, AT)).toThrow(/sealed under key id "k1" does not open as mail_webhook_endpoints\.secret of row 0b0e5a2e-[^:]*: it was altered, copied from another row or column, or SECRETS_KEYS gives another key under that id/);
  });

  it('refuses a tampered value: ciphertext, IV, tag, or the key id in its header (GCM additional data)', () => {
    const [k1, k2] = [key('k1'), key('k2')];
    const secrets = new SealedSecrets([k1, k2]);
    const sealed = secrets.seal('whsec_abcdef', AT);
    const flip = (text: string, at: number) => {
      const bytes = Buffer.from(text, 'base64url');
      bytes[at] = bytes[at]! ^ 1;
      return bytes.toString('base64url');
    };
    expect(() => secrets.open(withPart(sealed, 4, (p) => flip(p, 0)), AT)).toThrow(/does not open/);
    expect(() => secrets.open(withPart(sealed, 4, (p) => flip(p, Buffer.from(p, 'base64url').length - 1)), AT)).toThrow(/does not open/);
    expect(() => secrets.open(withPart(sealed, 3, (p) => flip(p, 0)), AT)).toThrow(/does not open/);
    // The same bytes relabelled as k2's, with k1's key material given under the id k2: the header is authenticated.
    const relabelled = withPart(sealed, 2, () => 'k2');
    expect(() => new SealedSecrets([{ id: 'k2', key: k1.key }]).open(relabelled, AT)).toThrow(/sealed under key id "k2" does not open/);
  });

  it('binds a value to its row, column and table: copied elsewhere it does not open, and says so without the value', () => {
    const secrets = new SealedSecrets([key('k1')]);
    const sealed = secrets.seal('whsec_theirs', AT);
    const elsewhere: SealedAt[] = [
      { ...AT, id: '7c1d9b0e-3a2f-4e6d-8b5a-2f0e9d8c7b6a' },
      { ...AT, column: 'previous_secret' },
      { ...AT, table: 'webhook_endpoints' },
    ];
    for (const at of elsewhere) {
      expect(() => secrets.open(sealed, at)).toThrow(`a secret sealed under key id "k1" does not open as ${at.table}.${at.column} of row ${at.id}: it was altered, copied from another row or column`);
      try {
        secrets.open(sealed, at);
      } catch (err) {
        expect((err as Error).message).not.toContain('whsec_theirs');
      }
    }
    expect(secrets.open(sealed, AT)).toBe('whsec_theirs');
    expect(() => secrets.seal('x', { ...AT, id: '' })).toThrow(/without its row id/);
  });

  it('opens a v1 value (sealed before the binding) wherever it is read, and seals only v2', () => {
    const k1 = key('k1');
    const secrets = new SealedSecrets([k1]);
    const legacy = sealV1(PEM, k1);
    expect(legacy).toMatch(/^sealed:v1:k1:/);
    expect(secrets.open(legacy, AT)).toBe(PEM);
    expect(secrets.open(legacy, { ...AT, id: '7c1d9b0e-3a2f-4e6d-8b5a-2f0e9d8c7b6a' })).toBe(PEM);
    expect(() => new SealedSecrets([key('k1')]).open(legacy, AT)).toThrow(/does not open/);
    expect(secrets.seal(PEM, AT)).toMatch(/^sealed:v2:k1:/);
  });

  it('refuses malformed sealed values with a plain error', () => {
    const secrets = new SealedSecrets([key('k1')]);
    const sealed = secrets.seal('x', AT);
    for (const bad of ['sealed:', 'sealed:v3:k1:a:b', 'sealed:v2:k1:a:b', `${sealed}:extra`, withPart(sealed, 3, () => 'AAAA'), withPart(sealed, 4, () => 'AA')]) {
      expect(() => secrets.open(bad, AT)).toThrow(/malformed/);
    }
  });

  it('opens a clear value (written before sealing) as it is', () => {
    const secrets = new SealedSecrets([key('k1')]);
    expect(isSealed(PEM)).toBe(false);
    expect(keyIdOf(PEM)).toBeUndefined();
    expect(secrets.open(PEM, AT)).toBe(PEM);
    expect(secrets.openNullable(null, AT)).toBeNull();
  });

  it('refuses bad keys: none, a short one, an id twice, an id with a colon', () => {
    expect(() => new SealedSecrets([])).toThrow(/at least one key/);
    expect(() => new SealedSecrets([{ id: 'k1', key: randomBytes(16) }])).toThrow(/not 32 bytes/);
    expect(() => new SealedSecrets([key('k1'), key('k1')])).toThrow(/twice/);
    expect(() => new SealedSecrets([key('a:b')])).toThrow(/not valid/);
  });
});
