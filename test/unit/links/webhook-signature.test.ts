import { describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../../examples/verify-webhook-signature.mjs';
import { signatureHeader } from '../../../src/links/webhooks/webhook-signature.ts';
import { MAX_ATTEMPTS, retryDelayMs } from '../../../src/links/webhooks/delivery-queue.ts';

describe('webhook signatures', () => {
  const body = '{"type":"scan.created","scanId":"x"}';

  it('signs the timestamp and the exact body; during a rotation both secrets verify', () => {
    const header = signatureHeader(body, ['whsec_new', 'whsec_old']);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(verifyWebhook(body, header, 'whsec_new')).toBe(true);
    expect(verifyWebhook(Buffer.from(body), header, 'whsec_old')).toBe(true);
    expect(verifyWebhook(body, header, 'whsec_other')).toBe(false);
    expect(verifyWebhook(body + ' ', header, 'whsec_new')).toBe(false);
    expect(verifyWebhook(body, undefined, 'whsec_new')).toBe(false);
    expect(verifyWebhook(body, 'v1=abc', 'whsec_new')).toBe(false);
  });

  it('refuses a timestamp outside the tolerance (replays)', () => {
    const old = signatureHeader(body, ['s'], Math.floor(Date.now() / 1000) - 301);
    expect(verifyWebhook(body, old, 's')).toBe(false);
    expect(verifyWebhook(body, old, 's', 600)).toBe(true);
  });
});

describe('webhook retry schedule', () => {
  it('waits base × factor^(n-1) after failed attempt n, for 5 attempts in all', () => {
    expect(MAX_ATTEMPTS).toBe(5);
    expect([1, 2, 3, 4].map((n) => retryDelayMs({ baseMs: 30_000, factor: 4 }, n))).toEqual([30_000, 120_000, 480_000, 1_920_000]);
  });
});
