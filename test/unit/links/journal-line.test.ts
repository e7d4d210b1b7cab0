// The scan journal's lines (journal-line.ts) and segment names (journal-segments.ts): a scan is
// written as an array and read back whole, an orphan visit and every line an older version wrote
// (objects, in .jsonl segments) are read as they were, and the shipper ships both generations of
// segments in order while an older version's shipper would see only its own.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeJournalLine, encodeJournalLine, type JournalEntry } from '../../../src/links/scans/journal-line.ts';
import { isSealedSegment, sealedName } from '../../../src/links/scans/journal-segments.ts';
import { JournalShipper } from '../../../src/links/scans/journal-shipper.ts';
import type { RawScan } from '../../../src/links/scans/raw-scan.ts';
import type { RawOrphanVisit } from '../../../src/links/orphans/orphan-visit.ts';
import { createLogger } from '../../../src/platform/logger.ts';
import { loadConfig } from '../../../src/platform/config.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const scan = (overrides: Partial<RawScan> = {}): RawScan => ({
  scanId: randomUUID(), clickId: 'A'.repeat(84), workspaceId: randomUUID(), linkId: randomUUID(), shortId: 'abc_12-X', campaignId: randomUUID(),
  timestamp: 1_780_000_000_123, destination: 'https://example.com/landing?ref=bench', variant: null, trigger: 'qr', ip: '2001:db8::1',
  userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X)', referrer: 'https://news.example/item?id=1', query: 'utm_source=x&a=%22', ...overrides,
});

const orphan: RawOrphanVisit = {
  visitId: randomUUID(), orphanType: 'invalid_short_url', workspaceId: randomUUID(), domainId: randomUUID(), domain: 'go.example.com', path: '/nope',
  timestamp: 1_780_000_000_000, ip: '81.2.69.160', userAgent: null, referrer: null,
};

describe('scan journal lines', () => {
  it('write a scan as an array and read it back whole, whatever its strings hold', () => {
    for (const raw of [
      scan(),
      scan({ campaignId: null, variant: 'https://example.com/b', trigger: 'link', userAgent: null, referrer: null, query: '' }),
      scan({ userAgent: 'line\nbreak\ttab "quote" \\ back ☃ \u2028 \ud83d\ude00', destination: 'https://例え.jp/パス?q=1', query: 'x=\u0000' }),
    ]) {
      const line = encodeJournalLine(raw);
      expect(line.startsWith('["s1",')).toBe(true);
      expect(line).not.toContain('\n');
      expect(decodeJournalLine(line)).toEqual(raw);
    }
  });

  it('write a scan journaled before variants and triggers existed with their defaults', () => {
    const { variant: _v, trigger: _t, ...old } = scan();
    expect(decodeJournalLine(encodeJournalLine(old as RawScan))).toEqual({ ...old, variant: null, trigger: 'link' });
  });

  it('keep an orphan visit an object, and read objects (an older version\'s lines) as they are', () => {
    expect(encodeJournalLine(orphan)).toBe(JSON.stringify(orphan));
    expect(decodeJournalLine(JSON.stringify(orphan))).toEqual(orphan);
    const older = scan();
    expect(decodeJournalLine(JSON.stringify(older))).toEqual(older);
  });

  it('refuse what is not a line: another layout, a line cut short, a bare value', () => {
    const line = encodeJournalLine(scan());
    for (const bad of [line.replace('"s1"', '"s2"'), line.slice(0, -1), line.slice(0, 40), '[]', '["s1"]', '42', 'null', '"text"', '']) {
      expect(() => decodeJournalLine(bad), bad).toThrow();
    }
  });
});

describe('scan journal segments', () => {
  it('seal either generation\'s open segment under its own sealed name', () => {
    expect(sealedName('/j/1-00000001.lines-open')).toBe('/j/1-00000001.lines');
    expect(sealedName('/j/1-00000001.open')).toBe('/j/1-00000001.jsonl');
    expect(sealedName('0-adopted-x-1.lines')).toBe('0-adopted-x-1.lines');
    expect(['a.lines', 'a.jsonl', 'a.lines-open', 'a.open', 'lease', 'owner.sock'].filter(isSealedSegment)).toEqual(['a.lines', 'a.jsonl']);
    // What an older version ships (it knew .jsonl only) and renames when it adopts (.open only): none of this version's.
    expect(['a.lines', 'a.lines-open'].map((f) => f.replace(/\.open$/, '.jsonl')).filter((f) => f.endsWith('.jsonl'))).toEqual([]);
  });

  it('are shipped by this version in order, both generations, and deleted once sent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-line-'));
    dirs.push(dir);
    const [a, b, c] = [scan(), scan(), scan()];
    // An adopted older segment (objects), this version's segment (arrays and an orphan visit), and an open one not yet sealed.
    writeFileSync(join(dir, '0-adopted-old-1-00000000.jsonl'), `${JSON.stringify(a)}\n`);
    writeFileSync(join(dir, '2-00000001.lines'), `${encodeJournalLine(b)}\n${encodeJournalLine(orphan)}\n${encodeJournalLine(c).slice(0, 30)}`);
    writeFileSync(join(dir, '3-00000002.lines-open'), `${encodeJournalLine(scan())}\n`);
    const sent: JournalEntry[][] = [];
    const log = createLogger(loadConfig({ ...process.env, LOG_LEVEL: 'silent' }), 'journal-line-test');
    const shipper = new JournalShipper<JournalEntry>(dir, async (records) => void sent.push(records), log, decodeJournalLine);
    shipper.shipSoon();
    await shipper.drain(5000);
    // The line cut short by a crash is skipped, as ever.
    expect(sent).toEqual([[a], [b, orphan]]);
    expect(readdirSync(dir)).toEqual(['3-00000002.lines-open']);
  });
});
