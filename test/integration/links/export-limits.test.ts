// The export's 50,000-row cap and its memory: 50,500 scans of ~2 KB each are
// exported from a separate ingress process, whose peak memory must not grow
// by anything near the ~100 MB it sends (the rows are streamed, not buffered).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClickHouse, type ClickHouse } from '../../../src/platform/clickhouse/client.ts';
import { sql } from '../../../src/platform/clickhouse/literal.ts';
import { testConfig } from '../../support/env.ts';
import { INGRESS_ENV } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { childPort, startTs, waitForOutput, type Child } from '../../support/processes.ts';

let child: Child;
let url: string;
let key: string;
let ch: ClickHouse;
const ROWS = 50_500;

/** Peak resident memory of a process so far, in MB (VmHWM). */
const peakMb = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

beforeAll(async () => {
  const port = childPort();
  child = startTs('src/main.ts', [], { ...INGRESS_ENV, HTTP_PORT: port, LOG_LEVEL: 'info', API_RATE_LIMIT_PER_MINUTE: '100000' });
  await waitForOutput(child, 'ingress listening');
  url = `http://127.0.0.1:${port}`;
  const ws = await workspaceWithKey(url);
  key = ws.key;
  ch = createClickHouse(testConfig());
  // Bulk test data straight into the table the export reads (the pipeline itself is tested elsewhere).
  // In chunks: INSERT … SELECT squashes its rows into one block, which the rollup view expands 13-fold.
  for (let offset = 0; offset < ROWS; offset += 5000) {
    await ch.exec(sql`
      INSERT INTO scans_input (scan_id, workspace_id, link_id, short_id, ts, device, user_agent, visitor_id)
      SELECT toString(generateUUIDv4()), ${ws.workspaceId}, 'l', 's', toDateTime(${Math.floor(Date.now() / 1000) - 7200} + intDiv(number, 100)), 'desktop',
             concat('agent-', toString(number), '-', ${'x'.repeat(2000)}), toString(number)
        FROM system.numbers LIMIT ${Math.min(5000, ROWS - offset)} OFFSET ${offset}`);
  }
}, 120_000);

afterAll(async () => {
  child?.process.kill('SIGTERM');
  await child?.exited;
  await ch?.close();
});

async function download(format: string): Promise<{ bytes: number; text: string }> {
  const res = await fetch(`${url}/api/v1/analytics/export?format=${format}&from=${new Date(Date.now() - 86_400_000).toISOString()}`, { headers: { authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
  const text = await res.text();
  return { bytes: Buffer.byteLength(text), text };
}

describe('export limits', () => {
  it('sends at most 50,000 rows, well-formed, without buffering them in memory', async () => {
    const before = peakMb(child.process.pid!);
    const csv = await download('csv');
    const json = await download('json');
    const growth = peakMb(child.process.pid!) - before;
    const csvLines = csv.text.trimEnd().split('\n');
    expect(csvLines).toHaveLength(50_000 + 1);
    expect(csvLines.every((l, i) => i === 0 || l.startsWith('"'))).toBe(true);
    const rows = JSON.parse(json.text) as { userAgent: string }[];
    expect(rows).toHaveLength(50_000);
    expect(rows[49_999]!.userAgent.length).toBeGreaterThan(2000);
    expect(csv.bytes + json.bytes).toBeGreaterThan(200 * 1024 * 1024);
    console.log(`export: ${((csv.bytes + json.bytes) / 1024 / 1024).toFixed(0)} MB sent, peak RSS growth ${growth.toFixed(1)} MB`);
    // Streaming still leaves garbage between collections: 28 to 69 MB of growth seen on Node 20, up to
    // 96.6 on Node 24 (a CI rehearsal; 60.9 once failed the earlier bound of 60). Buffering either
    // export holds its whole 108 MB at once, whatever else the heap holds, so any growth under 105
    // shows that neither was.
    expect(growth).toBeLessThan(105);
  });
});
