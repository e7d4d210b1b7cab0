// Raw scan export, streamed: ClickHouse writes CSV (CSVWithNames) or
// JSONEachRow, and the bytes flow to the client as they come, so memory does
// not grow with the number of rows. JSON is turned into one well-formed array.
import { StringDecoder } from 'node:string_decoder';
import { pipeline, Transform, type Readable } from 'node:stream';
import type { ClickHouse } from '../../platform/clickhouse/client.ts';
import { inList, join, sql, SqlFragment } from '../../platform/clickhouse/literal.ts';

export interface ExportRequest {
  workspaceId: string;
  from: Date;
  to: Date;
  linkId?: string;
  /** Only these links (those on a domain); an empty list exports nothing. */
  linkIds?: string[];
  includeBots: boolean;
  limit: number;
  format: 'csv' | 'json';
}

// Each exported column: its SQL expression and its name.
const COLUMNS: [string, string][] = [
  ['scan_id', 'scanId'], ["formatDateTime(ts, '%Y-%m-%dT%H:%M:%SZ')", 'timestamp'], ['link_id', 'linkId'], ['short_id', 'shortId'],
  ['campaign_id', 'campaignId'], ['destination', 'destination'], ['country', 'country'], ['region', 'region'], ['city', 'city'],
  ['device', 'device'], ['os', 'os'], ['browser', 'browser'], ['referrer', 'referrer'], ['referrer_host', 'referrerHost'],
  ['utm_source', 'utmSource'], ['utm_medium', 'utmMedium'], ['utm_campaign', 'utmCampaign'], ['utm_term', 'utmTerm'], ['utm_content', 'utmContent'],
  ['is_bot', 'isBot'], ['visitor_id', 'visitorId'], ['click_id', 'clickId'], ['user_agent', 'userAgent'], ['variant', 'variant'],
  ['trigger', 'trigger'],
];

const jsonColumns = new SqlFragment(COLUMNS.map(([expr, name]) => `${expr} AS ${name}`).join(', '));

// CSV is opened in spreadsheets, which run a cell starting with = + - @ (or a tab or CR before one)
// as a formula: a visitor's User-Agent, referrer or utm_* value could. As OWASP advises, such a value
// gets a leading ' (shown as text, not run); ClickHouse quotes every CSV string, quotes inside doubled.
// Every text column is treated so, whoever chose it; JSON keeps values exactly.
const OURS = new Set(['timestamp', 'isBot']);
const csvColumns = new SqlFragment(COLUMNS.map(([expr, name]) => `${OURS.has(name) ? expr : formulaSafe(expr)} AS ${name}`).join(', '));

function formulaSafe(expr: string): string {
  return `if(substring(${expr}, 1, 1) IN ('=', '+', '-', '@', '\\t', '\\r'), concat('\\'', ${expr}), ${expr})`;
}

/** JSONEachRow lines → `[row,row,…]`, never holding more than a chunk. */
function jsonArray(): Transform {
  let first = true;
  let rest = '';
  // A character's bytes may be split between two chunks: the decoder holds the first part back.
  const decoder = new StringDecoder('utf8');
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      const lines = (rest + decoder.write(chunk)).split('\n');
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
      rest += decoder.end();
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
      ...(request.linkIds ? [request.linkIds.length > 0 ? sql`link_id IN ${inList(request.linkIds)}` : sql`0`] : []),
      ...(request.includeBots ? [] : [sql`is_bot = 0`]),
    ],
    ' AND ',
  );
  const csv = request.format === 'csv';
  const format = new SqlFragment(csv ? 'CSVWithNames' : 'JSONEachRow');
  const stream = await ch.stream(sql`SELECT ${csv ? csvColumns : jsonColumns} FROM scans WHERE ${where} ORDER BY ts, scan_id LIMIT ${request.limit} FORMAT ${format}`, { signal });
  if (csv) return stream;
  return pipeline(stream, jsonArray(), () => {
    // Errors reach the client as a cut connection; nothing more to do here.
  });
}
