// Raw scan export, streamed: ClickHouse writes CSV (CSVWithNames) or
// JSONEachRow, and the bytes flow to the client as they come, so memory does
// not grow with the number of rows. JSON is turned into one well-formed array.
import { pipeline, Transform, type Readable } from 'node:stream';
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { join, sql, SqlFragment } from '../../platform/clickhouse/literal.ts';

export interface ExportRequest {
  workspaceId: string;
  from: Date;
  to: Date;
  linkId?: string;
  includeBots: boolean;
  limit: number;
  format: 'csv' | 'json';
}

const COLUMNS = new SqlFragment(`
  scan_id AS scanId, formatDateTime(ts, '%Y-%m-%dT%H:%M:%SZ') AS timestamp, link_id AS linkId, short_id AS shortId,
  campaign_id AS campaignId, destination, country, region, city, device, os, browser, referrer, referrer_host AS referrerHost,
  utm_source AS utmSource, utm_medium AS utmMedium, utm_campaign AS utmCampaign, utm_term AS utmTerm, utm_content AS utmContent,
  is_bot AS isBot, visitor_id AS visitorId, click_id AS clickId, user_agent AS userAgent`);

/** JSONEachRow lines → `[row,row,…]`, never holding more than a chunk. */
function jsonArray(): Transform {
  let first = true;
  let rest = '';
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      const lines = (rest + chunk.toString('utf8')).split('\n');
      rest = lines.pop() ?? '';
      let out = '';
      for (const line of lines) {
        if (!line) continue;
        out += (first ? '[' : ',') + line;
        first = false;
      }
      done(null, out);
    },
    flush(done) {
      let out = rest ? (first ? '[' : ',') + rest : '';
      if (rest) first = false;
      out += first ? '[]' : ']';
      done(null, out);
    },
  });
}

/**
 * The export as a stream. Errors and early ends travel through (pipeline), and
 * `signal` (the client going away) cancels the ClickHouse query instead of
 * leaving it to time out.
 */
export async function exportScans(ch: ClickHouse, request: ExportRequest, signal: AbortSignal): Promise<Readable> {
  const where = join(
    [
      sql`workspace_id = ${request.workspaceId} AND ts >= ${request.from} AND ts < ${request.to}`,
      ...(request.linkId ? [sql`link_id = ${request.linkId}`] : []),
      ...(request.includeBots ? [] : [sql`is_bot = 0`]),
    ],
    ' AND ',
  );
  const format = new SqlFragment(request.format === 'csv' ? 'CSVWithNames' : 'JSONEachRow');
    const { stream } = await ch.client.exec({
    query: sql`SELECT ${COLUMNS} FROM scans WHERE ${where} ORDER BY ts, scan_id LIMIT ${request.limit} FORMAT ${format}`.text,
    abort_signal: signal,
  });
  if (request.format === 'csv') return stream;
  return pipeline(stream, jsonArray(), () => {
    // Errors reach the client as a cut connection; nothing more to do here.
  });
}
