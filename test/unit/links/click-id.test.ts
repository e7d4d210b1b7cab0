// Click IDs are signed with a hand-made HMAC-SHA256 (one-shot hashes, no native object per
// redirect): it must equal node:crypto's createHmac for every key length, and verify must refuse
// anything altered.
import { createHmac, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ClickIds } from '../../../src/links/scans/click-id.ts';

const uuidBytes = (uuid: string) => Buffer.from(uuid.replace(/-/g, ''), 'hex');

describe('click IDs', () => {
  it('carry the claims and an HMAC-SHA256 equal to createHmac, for secrets shorter than, as long as and longer than a block (also counted in UTF-8 bytes)', () => {
    for (const secret of ['s', 'bench-click-id-secret-0123456789', 'k'.repeat(63), 'k'.repeat(64), 'k'.repeat(65), 'é'.repeat(40), 'long'.repeat(40)]) {
      const ids = new ClickIds(secret);
      for (let i = 0; i < 50; i++) {
        const claims = { scanId: randomUUID(), linkId: randomUUID(), workspaceId: randomUUID() };
        const token = ids.sign(claims);
        const raw = Buffer.from(token, 'base64url');
        const body = Buffer.concat([Buffer.from([1]), uuidBytes(claims.scanId), uuidBytes(claims.linkId), uuidBytes(claims.workspaceId)]);
        expect(token).toMatch(/^[A-Za-z0-9_-]{84}$/);
        expect(raw.subarray(0, 49)).toEqual(body);
        expect(raw.subarray(49)).toEqual(createHmac('sha256', secret).update(body).digest().subarray(0, 14));
        expect(ids.verify(token)).toEqual(claims);
      }
    }
  });

  it('refuses a token with any byte changed, one signed with another secret, and malformed ones', () => {
    const ids = new ClickIds('bench-click-id-secret-0123456789');
    const claims = { scanId: randomUUID(), linkId: randomUUID(), workspaceId: randomUUID() };
    const raw = Buffer.from(ids.sign(claims), 'base64url');
    for (let i = 0; i < raw.length; i++) {
      const altered = Buffer.from(raw);
      altered[i] = altered[i]! ^ 1;
      expect(ids.verify(altered.toString('base64url'))).toBeUndefined();
    }
    expect(ids.verify(new ClickIds('another-secret').sign(claims))).toBeUndefined();
    for (const bad of ['', 'x', ids.sign(claims).slice(1), `${ids.sign(claims)}A`, '!'.repeat(84)]) expect(ids.verify(bad)).toBeUndefined();
    // Verifying does not disturb signing (they share the HMAC's buffers).
    expect(ids.verify(ids.sign(claims))).toEqual(claims);
    expect(() => ids.sign({ ...claims, linkId: 'not-a-uuid' })).toThrow();
  });

  it('signs one busy link\'s click IDs (its ids kept in the buffer between calls) as any other, across verifications, other links and refused claims', () => {
    const secret = 'bench-click-id-secret-0123456789';
    const ids = new ClickIds(secret);
    const [link, other, workspace] = [randomUUID(), randomUUID(), randomUUID()];
    const expected = (claims: { scanId: string; linkId: string; workspaceId: string }) => {
      const body = Buffer.concat([Buffer.from([1]), uuidBytes(claims.scanId), uuidBytes(claims.linkId), uuidBytes(claims.workspaceId)]);
      return Buffer.concat([body, createHmac('sha256', secret).update(body).digest().subarray(0, 14)]).toString('base64url');
    };
    const steps: (() => void)[] = [
      () => ids.verify(ids.sign({ scanId: randomUUID(), linkId: other, workspaceId: workspace })),
      () => expect(() => ids.sign({ scanId: randomUUID(), linkId: 'not-a-uuid', workspaceId: workspace })).toThrow(),
      () => expect(() => ids.sign({ scanId: randomUUID(), linkId: link, workspaceId: 'not-a-uuid' })).toThrow(),
      () => ids.verify('A'.repeat(84)),
      () => {},
    ];
    for (let i = 0; i < 40; i++) {
      // The same link, another workspace (a link moved), then the first again.
      for (const claims of [{ scanId: randomUUID(), linkId: link, workspaceId: workspace }, { scanId: randomUUID(), linkId: link, workspaceId: other }, { scanId: randomUUID(), linkId: link, workspaceId: workspace }]) {
        expect(ids.sign(claims)).toBe(expected(claims));
        expect(ids.verify(ids.sign(claims))).toEqual(claims);
      }
      steps[i % steps.length]!();
    }
  });

  it('reads the claims\' UUIDs in any case and as hex without hyphens, and refuses a 36-character id that is not one', () => {
    const ids = new ClickIds('bench-click-id-secret-0123456789');
    const claims = { scanId: randomUUID(), linkId: randomUUID(), workspaceId: randomUUID() };
    const token = ids.sign(claims);
    expect(ids.sign({ scanId: claims.scanId.toUpperCase(), linkId: claims.linkId, workspaceId: claims.workspaceId })).toBe(token);
    expect(ids.sign({ scanId: claims.scanId.replace(/-/g, ''), linkId: claims.linkId, workspaceId: claims.workspaceId })).toBe(token);
    const swapped = `${claims.scanId.slice(0, 8)}0${claims.scanId.slice(9, 13)}-${claims.scanId.slice(14)}`;
    for (const bad of [swapped, claims.scanId.replace(/^./, 'g'), claims.scanId.replace(/.$/, 'é'), `${claims.scanId.slice(0, 35)}-`, 'x'.repeat(36)]) {
      expect(bad).toHaveLength(36);
      expect(() => ids.sign({ ...claims, scanId: bad })).toThrow('click ID claims must be UUIDs');
    }
  });
});
