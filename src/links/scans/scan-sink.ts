// The scan sink: a batch worker that writes scans from the `scans` topic to
// ClickHouse, each scan exactly once. The runtime commits a batch's offsets
// only after the insert returned, so a crash replays scans rather than losing
// them; replays and duplicates (at-least-once delivery, a re-shipped journal)
// are dropped here: the batch is deduplicated by scanId, then the ids already
// in ClickHouse are left out. The check and the insert run under a per-partition
// Postgres lock, so even two consumers that briefly share a partition during a
// rebalance cannot both insert a scan. Analytics therefore read without FINAL,
// and the rollup views fed by these inserts are exact.
import type { ActorMessage, BatchWorkerKind } from '../../platform/actors/worker-kind.ts';
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { inList, sql } from '../../platform/clickhouse/literal.ts';
import { withAdvisoryLock } from '../../platform/postgres/advisory-lock.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { scansTopic } from '../../../topics/scans.ts';
import type { ScanEvent } from './scan-event.ts';

const INSERT_CHUNK = 2000;

/** A scan as a ClickHouse row (absent values as empty strings; DateTime as epoch seconds). */
export function toScanRow(e: ScanEvent): Record<string, unknown> {
  return {
    scan_id: e.scanId,
    click_id: e.clickId,
    workspace_id: e.workspaceId,
    link_id: e.linkId,
    short_id: e.shortId,
    campaign_id: e.campaignId ?? '',
    ts: Math.floor(e.timestamp / 1000),
    destination: e.destination,
    country: e.country ?? '',
    region: e.region ?? '',
    city: e.city ?? '',
    device: e.device,
    os: e.os ?? '',
    browser: e.browser ?? '',
    referrer: e.referrer ?? '',
    referrer_host: e.referrerHost ?? '',
    utm_source: e.utmSource ?? '',
    utm_medium: e.utmMedium ?? '',
    utm_campaign: e.utmCampaign ?? '',
    utm_term: e.utmTerm ?? '',
    utm_content: e.utmContent ?? '',
    is_bot: e.isBot ? 1 : 0,
    user_agent: e.userAgent ?? '',
    visitor_id: e.visitorId,
  };
}

/** The scans of `events` not yet in ClickHouse, each once. */
export async function newScans(clickhouse: ClickHouse, events: readonly ScanEvent[]): Promise<ScanEvent[]> {
  const unique = new Map<string, ScanEvent>();
  for (const e of events) if (!unique.has(e.scanId)) unique.set(e.scanId, e);
  if (unique.size === 0) return [];
  const all = [...unique.values()];
  const seconds = all.map((e) => Math.floor(e.timestamp / 1000));
  // The primary key (workspace_id, ts, scan_id) narrows this to the batch's few seconds.
  const present = await clickhouse.rows<{ scan_id: string }>(sql`
    SELECT scan_id FROM scans
     WHERE workspace_id IN ${inList([...new Set(all.map((e) => e.workspaceId))])}
       AND ts >= ${new Date(Math.min(...seconds) * 1000)} AND ts <= ${new Date(Math.max(...seconds) * 1000)}
       AND scan_id IN ${inList(all.map((e) => e.scanId))}`);
  for (const row of present) unique.delete(row.scan_id);
  return [...unique.values()];
}

export function scanSinkKind(clickhouse: ClickHouse, pg: Pool): BatchWorkerKind<ScanEvent> {
  return {
    kind: 'scan-sink',
    topics: [scansTopic],
    concurrency: 2,
    handleBatch: async (messages: ActorMessage<ScanEvent>[]) => {
      const first = messages[0];
      if (!first) return;
      await withAdvisoryLock(pg, `scan-sink:${first.topic}:${first.partition}`, async () => {
        const fresh = await newScans(clickhouse, messages.map((m) => m.value));
        // Bounded inserts: the rollup view expands each inserted block 13-fold in memory.
        for (let i = 0; i < fresh.length; i += INSERT_CHUNK) await clickhouse.insert('scans', fresh.slice(i, i + INSERT_CHUNK).map(toScanRow));
      });
    },
  };
}
