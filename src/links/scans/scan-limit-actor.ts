// The scan-limit actor: counts each link's scans (bots too: every redirect
// sent someone to the destination, and a User-Agent is the client's to choose) from the
// `scans` topic and, when a link reaches its scan limit, marks it exhausted and
// publishes the new state to links.changelog, from which every ingress stops
// redirecting it. Counting is exactly-once in effect: the counts and the counted
// scan ids are written in the transaction of withAppliedOffsets, which records
// the partition's last applied offset and skips messages at or below it on
// replay; a scan delivered again at another offset is recognised by its id.
//
// Concurrent scans are held to the limit at the ingress by ScanLimitGuard
// (src/links/redirect/scan-limit-guard.ts); this actor is the durable count it
// seeds from, and the authority that closes the link for good.
import { withAppliedOffsets } from '../../platform/actors/applied-offsets.ts';
import type { ActorMessage, BatchWorkerKind } from '../../platform/actors/worker-kind.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { SCAN_BATCH_FETCH, scansTopic } from '../../../topics/scans.ts';
import type { LinkChangelog } from '../changelog/link-changelog.ts';
import type { ScanEvent } from './scan-event.ts';

export const SCAN_LIMIT_GROUP = 'scan-limits';

export function scanLimitKind(pg: Pool, changelog: LinkChangelog): BatchWorkerKind<ScanEvent> {
  return {
    kind: SCAN_LIMIT_GROUP,
    topics: [scansTopic],
    concurrency: 2,
    // One transaction per batch: fuller fetches.
    fetch: SCAN_BATCH_FETCH,
    handleBatch: async (messages: ActorMessage<ScanEvent>[]) => {
      const exhausted = await withAppliedOffsets(pg, SCAN_LIMIT_GROUP, messages, async (client, fresh) => {
        const firstSeen = fresh.length
          ? new Set(
              (
                await client.query<{ scan_id: string }>(
                  'INSERT INTO counted_scans (scan_id) SELECT unnest($1::uuid[]) ON CONFLICT (scan_id) DO NOTHING RETURNING scan_id',
                  [[...new Set(fresh.map((m) => m.value.scanId))]],
                )
              ).rows.map((r) => r.scan_id),
            )
          : new Set<string>();
        const perLink = new Map<string, number>();
        for (const m of fresh) {
          if (!firstSeen.delete(m.value.scanId)) continue; // already counted (a redelivery)
          perLink.set(m.value.linkId, (perLink.get(m.value.linkId) ?? 0) + 1);
        }
        let closedIds: string[] = [];
        if (perLink.size > 0) {
          const ids = [...perLink.keys()];
          await client.query(
            `INSERT INTO link_scan_counts (link_id, scans)
             SELECT l.id, n FROM unnest($1::uuid[], $2::bigint[]) AS t(id, n) JOIN links l ON l.id = t.id
             ON CONFLICT (link_id) DO UPDATE SET scans = link_scan_counts.scans + EXCLUDED.scans`,
            [ids, ids.map((id) => perLink.get(id))],
          );
          const closed = await client.query<{ id: string }>(
            `UPDATE links l SET exhausted_at = date_trunc('milliseconds', now()), version = version + 1, updated_at = date_trunc('milliseconds', now())
               FROM link_scan_counts c
              WHERE c.link_id = l.id AND l.id = ANY($1::uuid[]) AND l.scan_limit IS NOT NULL
                AND c.scans >= l.scan_limit AND l.exhausted_at IS NULL
             RETURNING l.id`,
            [ids],
          );
          closedIds = closed.rows.map((r) => r.id);
          for (const id of closedIds) await client.query('INSERT INTO link_changelog_outbox (link_id) VALUES ($1)', [id]);
        }
        // Forget ids older than any duplicate could be (the topic keeps scans 7 days), a little at a time.
        await client.query(`DELETE FROM counted_scans WHERE scan_id IN (SELECT scan_id FROM counted_scans WHERE seen_at < now() - interval '8 days' LIMIT 1000)`);
        return closedIds;
      });
      // Committed: publish now (the outbox relay covers a crash between the commit and this).
      if (exhausted && exhausted.length > 0) await changelog.publish(exhausted);
    },
  };
}
