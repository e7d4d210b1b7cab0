import { readFileSync } from 'node:fs';
const s = JSON.parse(readFileSync('/work/wt-page/.stack/bench-analytics-page.json', 'utf8'));
const now = Math.floor(Date.now() / 1000);
const from = Math.floor((now - 30 * 86400) / 3600) * 3600;
const firstDay = Math.ceil(from / 86400) * 86400, lastDay = Math.floor(now / 86400) * 86400;
const w = `workspace_id = '${s.workspaceId}' AND link_id IN ('${s.linkId}') AND is_bot IN (0)`;
const qs: Record<string, string> = {
  rankedPre: `SELECT pair.1 AS d, pair.2 AS v, sum(s) AS n FROM (SELECT country, value, sum(scans) AS s FROM scans_link_dims_daily WHERE ${w} AND day >= toDateTime(${firstDay}) AND day < toDateTime(${lastDay}) AND dim = 'visit' GROUP BY country, value) ARRAY JOIN [('country', country), ('device', splitByChar('\t', value)[1]), ('browser', splitByChar('\t', value)[3]), ('referrer', splitByChar('\t', value)[4])] AS pair GROUP BY d, v ORDER BY d, n DESC LIMIT 10 BY d`,
  variantsNoVisitors: `SELECT variant, countMerge(scans) AS scans FROM scans_link_variants WHERE ${w} AND hour >= toDateTime(${from}) AND hour < toDateTime(${now}) GROUP BY variant`,
  variantsVisitors: `SELECT variant, countMerge(scans) AS scans, uniqHLL12Merge(visitors) AS v FROM scans_link_variants WHERE ${w} AND hour >= toDateTime(${from}) AND hour < toDateTime(${now}) GROUP BY variant`,
  seriesDaily: `SELECT toStartOfDay(day) t, sum(scans) FROM scans_link_dims_daily WHERE ${w} AND day >= toDateTime(${firstDay}) AND day < toDateTime(${lastDay}) AND dim = 'visit' GROUP BY t`,
};
for (let round = 0; round < 3; round++) for (const [name, q] of Object.entries(qs)) {
  const t = performance.now();
  const res = await fetch('http://127.0.0.1:8123/?database=linkmail_bench_page', { method: 'POST', body: q + ' FORMAT JSON' });
  const body = await res.text();
  console.log(round, name, (performance.now() - t).toFixed(0), 'ms', res.status, body.length, res.status !== 200 ? body.slice(0, 300) : '');
}
