// The QR marker (`?qr`): the redirect takes it off the query and tells a QR scan by it; and the
// scan schema's `trigger` is a BACKWARD evolution: scans written before it read as link.
import { readFileSync } from 'node:fs';
import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { splitQrMarker, visitQueryOf, withQrMarker } from '../../../src/links/redirect/qr-marker.ts';

const schema = (path: string) => avro.Type.forSchema(JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')));

describe('the QR marker', () => {
  it('is a bare qr parameter, taken off whatever else the query holds', () => {
    expect(withQrMarker('https://go.example.com/menu')).toBe('https://go.example.com/menu?qr');
    expect(visitQueryOf('/menu?qr')).toEqual({ query: '', trigger: 'qr' });
    expect(visitQueryOf('/menu?qr=')).toEqual({ query: '', trigger: 'qr' });
    expect(visitQueryOf('/menu?qr&utm_source=poster')).toEqual({ query: 'utm_source=poster', trigger: 'qr' });
    expect(visitQueryOf('/menu?a=1&qr&b=2')).toEqual({ query: 'a=1&b=2', trigger: 'qr' });
    expect(visitQueryOf('/menu')).toEqual({ query: '', trigger: 'link' });
    expect(splitQrMarker('')).toEqual({ query: '', trigger: 'link' });
  });

  it('leaves a destination\'s own qr=… and look-alikes alone', () => {
    for (const query of ['qr=menu', 'qrcode=1', 'a=1&qrx', 'a=qr', 'xqr']) expect(splitQrMarker(query)).toEqual({ query, trigger: 'link' });
  });
});

describe('scan.avsc trigger', () => {
  it('reads a scan written with the schema before it as link (BACKWARD: the new schema reads old data)', () => {
    const before = schema('../../fixtures/scan-before-trigger.avsc');
    const now = schema('../../../schemas/scan.avsc');
    const old = before.toBuffer({
      scanId: 's', clickId: 'c', workspaceId: 'w', linkId: 'l', shortId: 'x', campaignId: null, timestamp: 0, destination: 'https://example.com/',
      country: null, region: null, city: null, device: 'desktop', os: null, browser: null, referrer: null, referrerHost: null,
      utmSource: null, utmMedium: null, utmCampaign: null, utmTerm: null, utmContent: null, isBot: false, userAgent: null, visitorId: 'v', variant: null,
    });
    const read = now.fromBuffer(old, now.createResolver(before)) as { trigger: string; scanId: string };
    expect([read.scanId, read.trigger]).toEqual(['s', 'link']);
  });
});
