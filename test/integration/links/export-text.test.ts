// The export carries visitors' text exactly, and safely: multi-byte UTF-8 survives
// ClickHouse's chunks however they split it (JSON), and text a visitor chose that a
// spreadsheet would run as a formula is neutralised in CSV (OWASP "CSV injection").
// Scans go through the real pipeline (scans topic → sink worker → ClickHouse).
import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostWorkers } from '../../../src/platform/actors/host.ts';
import type { ScanEvent } from '../../../src/links/scans/scan-event.ts';
import { scansTopic } from '../../../topics/scans.ts';
import { eventually } from '../../support/env.ts';
import { client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { scansStored, scanSink } from '../../support/links/scans.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';

let ingress: TestIngress;
let api: ReturnType<typeof client>;
let stopSink: () => Promise<void>;
const events: ScanEvent[] = [];
const now = Date.now();
const from = new Date(now - 86_400_000).toISOString();
const to = new Date(now + 3_600_000).toISOString();

// Two, three and four bytes per character, dense enough that chunk boundaries fall inside characters.
const WIDE = 'Zürich 東京 😀 Ελλάδα Škoda ';
// What each spreadsheet-active first character looks like in a visitor's text.
const FORMULAS = ['=HYPERLINK("http://evil.example","x")', '+1+cmd|\' /C calc\'!A0', '-2+3', '@SUM(1,1)', '\t=1+1', '\r=1+1'];

function event(workspaceId: string, link: { id: string; shortId: string }, i: number, text: Partial<ScanEvent>): ScanEvent {
  return {
    scanId: randomUUID(), clickId: 'c', workspaceId, linkId: link.id, shortId: link.shortId, campaignId: null,
    timestamp: now - 3_600_000 + i, destination: 'https://example.com/', country: null, region: null, city: null,
    device: 'desktop', os: null, browser: null, referrer: null, referrerHost: null,
    utmSource: null, utmMedium: null, utmCampaign: null, utmTerm: null, utmContent: null,
    isBot: false, userAgent: null, visitorId: `v${i}`, ...text,
  };
}

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' });
  const ws = await workspaceWithKey(ingress.url);
  api = client(ingress.url, ws.key);
  const link = (await api.post('/api/v1/links', { destination: 'https://example.com/text' })).body;
  for (let i = 0; i < 3000; i++) {
    const wide = `${WIDE.repeat(8)}#${i}`;
    events.push(event(ws.workspaceId, link, i, {
      userAgent: `Mozilla/5.0 ${wide}`, referrer: `https://例え.jp/${wide}`, utmSource: `Zürich-${i}`, utmCampaign: wide, utmContent: '東京😀',
    }));
  }
  FORMULAS.forEach((f, i) => events.push(event(ws.workspaceId, link, 3000 + i, {
    userAgent: f, referrer: f, utmSource: f, utmMedium: f, utmCampaign: f, utmTerm: f, utmContent: f,
  })));
  const messages = events.map((e) => ({ key: e.workspaceId, value: e }));
  for (let i = 0; i < messages.length; i += 500) await ingress.platform.publisher.publish(scansTopic, messages.slice(i, i + 500));
  const [runtime] = await hostWorkers(ingress.platform, [scanSink(ingress.platform)]);
  stopSink = () => runtime!.stop();
  await eventually(() => scansStored(ingress.platform.clickhouse, ws.workspaceId, events.length), 90_000, 250);
}, 180_000);

afterAll(async () => {
  await stopSink?.();
  await ingress?.close();
});

const VISITOR_TEXT = ['userAgent', 'referrer', 'utmSource', 'utmMedium', 'utmCampaign', 'utmTerm', 'utmContent'] as const;
const exported = (e: ScanEvent, column: (typeof VISITOR_TEXT)[number]) => e[column] ?? '';

describe('export text', () => {
  it('keeps multi-byte UTF-8 exact in JSON across thousands of rows (many ClickHouse chunks)', async () => {
    const { status, body } = await api.get(`/api/v1/analytics/export?format=json&from=${from}&to=${to}`);
    expect(status).toBe(200);
    const rows = body as Record<string, string>[];
    expect(rows).toHaveLength(events.length);
    const byId = new Map(events.map((e) => [e.scanId, e]));
    const wrong = rows.filter((row) => {
      const e = byId.get(row.scanId!)!;
      return VISITOR_TEXT.some((c) => row[c] !== exported(e, c));
    });
    expect(wrong.map((r) => r.userAgent).slice(0, 3)).toEqual([]);
    expect(rows.some((r) => r.userAgent!.includes('\uFFFD'))).toBe(false);
  });

  it('neutralises spreadsheet formulas in CSV with a leading quote, every other value exact', async () => {
    const { status, body } = await api.get(`/api/v1/analytics/export?format=csv&from=${from}&to=${to}`);
    expect(status).toBe(200);
    // Every field is quoted, so a spreadsheet takes the leading ' as part of the text.
    expect((body as string).split('\n')[1]!.startsWith('"')).toBe(true);
    const rows = parse(body as string, { columns: true }) as Record<string, string>[];
    expect(rows).toHaveLength(events.length);
    const byId = new Map(events.map((e) => [e.scanId, e]));
    let formulas = 0;
    for (const row of rows) {
      const e = byId.get(row.scanId!)!;
      for (const c of VISITOR_TEXT) {
        const value = exported(e, c);
        const active = /^[=+\-@\t\r]/.test(value);
        if (active) formulas++;
        expect(row[c], `${c} of ${JSON.stringify(value)}`).toBe(active ? `'${value}` : value);
      }
      // No field of the row starts a formula.
      for (const [column, value] of Object.entries(row)) expect(/^[=+\-@\t\r]/.test(value), `${column}: ${JSON.stringify(value)}`).toBe(false);
    }
    expect(formulas).toBe(FORMULAS.length * VISITOR_TEXT.length);
  });
});
