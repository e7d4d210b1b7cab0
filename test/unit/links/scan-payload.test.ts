// The scan.created body names the A/B variant the visitor was sent to (null without a test).
import { describe, expect, it } from 'vitest';
import { scanCreatedBody } from '../../../src/links/webhooks/scan-payload.ts';
import type { ScanEvent } from '../../../src/links/scans/scan-event.ts';

const scan = (variant: string | null | undefined) => ({
  scanId: 's1', clickId: 'c1', workspaceId: 'w1', linkId: 'l1', shortId: 'promo', timestamp: Date.UTC(2026, 10, 27),
  destination: 'https://example.com/b', variant, device: 'desktop', isBot: false, visitorId: 'v1', userAgent: null,
}) as unknown as ScanEvent;

describe('scan.created body', () => {
  it('carries the variant of an A/B test link, and null for a link without a test', () => {
    expect(JSON.parse(scanCreatedBody(scan('https://example.com/b'))).data.variant).toBe('https://example.com/b');
    expect(JSON.parse(scanCreatedBody(scan(undefined))).data.variant).toBeNull();
    expect(JSON.parse(scanCreatedBody(scan(null))).data).toMatchObject({ scanId: 's1', linkId: 'l1', variant: null });
  });

  it('carries how the visitor came: qr for a scan of our QR code, link otherwise (and for scans without the field)', () => {
    expect(JSON.parse(scanCreatedBody({ ...scan(null), trigger: 'qr' })).data.trigger).toBe('qr');
    expect(JSON.parse(scanCreatedBody({ ...scan(null), trigger: 'link' })).data.trigger).toBe('link');
    expect(JSON.parse(scanCreatedBody(scan(null))).data.trigger).toBe('link');
  });
});
