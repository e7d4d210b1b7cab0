// The scan-limit actor: counts each link's scans (bots excluded) from the
// `scans` topic and, when a link reaches its scan limit, marks it exhausted and
// publishes the new state to links.changelog, from which every ingress stops
// redirecting it. Counting is exactly-once in effect: the counts, the counted
// scan ids and the last applied offset of the partition are written in one
// Postgres transaction; messages at or below that offset are skipped on
// replay, and a scan delivered again at another offset is recognised by its id.
//
// Concurrent scans are held to the limit at the ingress by ScanLimitGuard
// (src/links/redirect/scan-limit-guard.ts); this actor is the durable count it
// seeds from, and the authority that closes the link for good.
import type pg from 'pg';
import type { ActorMessage, BatchWorkerKind } from '../../platform/actors/worker-kind.ts';
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import { scansTopic } from '../../../topics/scans.ts';
import type { LinkChangelog } from '../changelog/link-changelog.ts';
import type { ScanEvent } from './scan-event.ts';

export const SCAN_LIMIT_GROUP = 'scan-limits';

async function appliedOffset(client: pg.PoolClient, topic: string, partition: number): Promise<bigint> {
  const { rows } = await client.query<{ offset: string }>(
    'SELECT "offset" FROM actor_offsets WHERE group_id = $1 AND topic = $2 AND partition = $3 FOR UPDATE',
    [SCAN_LIMIT_GROUP, topic, partition],
  );
  return rows[0] ? BigInt(rows[0].offset) : -1n;
}

export function scanLimitKind(pg: Pool, changelog: LinkChangelog): BatchWorkerKind<ScanEvent> {
  return {
    kind: SCAN_LIMIT_GROUP,
    topics: [scansTopic],
    concurrency: 2,
    handleBatch: async (messages: ActorMessage<ScanEvent>[]) => {
      const first = messages[0];
      if (!first) return;
      const { topic, partition } = first;
      const exhausted = await withTransaction(pg, async (client) => {
        const done = await appliedOffset(client, topic, partition);
        const fresh = messages.filter((m) => BigInt(m.offset) > done);
        if (fresh.length === 0) return [];
        const humans = fresh.filter((m) => !m.value.isBot);
        const firstSeen = humans.length
          ? new Set(
              (
                await client.query<{ scan_id: string }>(
                  'INSERT INTO counted_scans (scan_id) SELECT unnest($1::uuid[]) ON CONFLICT (scan_id) DO NOTHING RETURNING scan_id',
                  [[...new Set(humans.map((m) => m.value.scanId))]],
                )
              ).rows.map((r) => r.scan_id),
            )
          : new Set<string>();
        const perLink = new Map<string, number>();
        for (const m of humans) {
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
        const last = fresh.at(-1)!.offset;
        await client.query(
          `INSERT INTO actor_offsets (group_id, topic, partition, "offset") VALUES ($1, $2, $3, $4)
           ON CONFLICT (group_id, topic, partition) DO UPDATE SET "offset" = EXCLUDED."offset"`,
          [SCAN_LIMIT_GROUP, topic, partition, last],
        );
        // Forget ids older than any duplicate could be (the topic keeps scans 7 days), a little at a time.
        await client.query(`DELETE FROM counted_scans WHERE scan_id IN (SELECT scan_id FROM counted_scans WHERE seen_at < now() - interval '8 days' LIMIT 1000)`);
        return closedIds;
      });
      // Committed: publish now (the outbox relay covers a crash between the commit and this).
      if (exhausted.length > 0) await changelog.publish(exhausted);
    },
  };
}
