// The analytics page's HTML: everything it shows is in the markup (no script is
// needed to read it), every value escaped, the chart an inline SVG with its
// numbers also as a table. Elements the live script changes carry data-*
// attributes naming what they count (page-script.ts).
import { escapeHtml } from '../../platform/http/html-page.ts';
import type { PageResult } from './page-queries.ts';
import { PAGE_SCRIPT } from './page-script.ts';
import { PRESETS, type PageRange } from './page-range.ts';
import { bucketLabel, timeChart } from './time-chart.ts';

const fmt = new Intl.NumberFormat('en');
const regions = new Intl.DisplayNames(['en'], { type: 'region' });

function countryName(code: string): string {
  try {
    return `${regions.of(code) ?? code} (${code})`;
  } catch {
    return code;
  }
}

const percent = (n: number, total: number) => (total > 0 ? (100 * n) / total : 0);
const pctText = (n: number, total: number) => `${percent(n, total).toFixed(1)}%`;

const STYLE = `
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#f4f5f7}
header,main,footer{max-width:1120px;margin:0 auto;padding:0 16px}header{padding-top:24px}
h1{font-size:1.6rem;margin:0 0 4px}h2{font-size:1.1rem;margin:0 0 8px}p.sub{margin:0;color:#4a4a4a;overflow-wrap:anywhere}
a{color:#1d4ed8}.card{background:#fff;border:1px solid #d9dce1;border-radius:8px;padding:16px;margin:0 0 16px}
form.range{display:flex;flex-wrap:wrap;gap:8px 16px;align-items:end;margin:16px 0}form.range label{display:flex;flex-direction:column;font-size:.85rem;color:#333}
input,select,button{font:inherit;padding:4px 8px;border:1px solid #767676;border-radius:4px;background:#fff;color:#1a1a1a}button{background:#1d4ed8;color:#fff;border-color:#1d4ed8;cursor:pointer}
.presets a{margin-right:10px}.presets a[aria-current]{font-weight:700;color:#1a1a1a;text-decoration:none}
.stats{display:grid;grid-template-columns:repeat(auto-fit,minmax(180px,1fr));gap:16px;margin-bottom:16px}.stat{margin:0}
.stat dt{font-size:.85rem;color:#4a4a4a}.stat dd{margin:0;font-size:1.9rem;font-weight:650;font-variant-numeric:tabular-nums}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:16px}.grid .card{margin:0}
table{width:100%;border-collapse:collapse;font-variant-numeric:tabular-nums}caption{text-align:left;font-weight:650;padding-bottom:6px}
th,td{text-align:left;padding:4px 6px;border-bottom:1px solid #eceef1;vertical-align:top}th[scope=row]{font-weight:400;overflow-wrap:anywhere}
td.num,th.num{text-align:right;white-space:nowrap}td.share{width:28%}.meter{display:block;height:8px;background:#e5e9f2;border-radius:4px;overflow:hidden;margin-top:4px}
.meter span{display:block;height:100%;background:#1d4ed8}.chart{width:100%;height:auto;display:block}.chart .bar{fill:#1d4ed8}.chart .bar:hover{fill:#0b2f8a}
.chart .grid{stroke:#d9dce1}.chart .axis{font-size:12px;fill:#4a4a4a}details{margin-top:8px}summary{cursor:pointer;color:#1d4ed8}
#live-status{display:inline-block;font-size:.85rem;padding:2px 8px;border-radius:10px;background:#eceef1;color:#333}#live-status[data-state=live]{background:#dcfce7;color:#14532d}
footer{color:#4a4a4a;font-size:.85rem;padding-bottom:32px}.empty{color:#4a4a4a}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}`;

const documentStart = (title: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><meta name="referrer" content="no-referrer"><link rel="icon" href="data:,"><title>${escapeHtml(title)}</title>
<style>${STYLE}</style></head><body>`;
const documentEnd = (withScript: boolean) => `${withScript ? `<script>${PAGE_SCRIPT}</script>` : ''}</body></html>`;

/** A whole page: the document around a body, with the page's script when it has one. */
export function document(title: string, body: string, withScript: boolean): string {
  return `${documentStart(title)}${body}${documentEnd(withScript)}`;
}

export interface RankedRow {
  value: string;
  label: string;
  count: number;
}

/**
 * A ranked group as a table: the value (its label), its scans and its share of all scans. `dim`
 * names what a live scan counts in (page-script.ts); `link` rows may link somewhere.
 */
function rankedTable(dim: string, caption: string, header: string, rows: readonly RankedRow[], total: number, href?: (value: string) => string, empty = 'No scans in this range.'): string {
  const body = rows.length === 0
    ? `<tr class="empty-row"><td colspan="3" class="empty">${escapeHtml(empty)}</td></tr>`
    : rows.map((r) => {
      const label = href ? `<a href="${escapeHtml(href(r.value))}">${escapeHtml(r.label)}</a>` : escapeHtml(r.label);
      return `<tr data-value="${escapeHtml(r.value)}"><th scope="row">${label}</th><td class="num" data-count="${r.count}">${fmt.format(r.count)}</td><td class="share"><span class="pct">${pctText(r.count, total)}</span><span class="meter" aria-hidden="true"><span style="width:${percent(r.count, total).toFixed(1)}%"></span></span></td></tr>`;
    }).join('');
  return `<section class="card" aria-labelledby="t-${dim}"><table data-dim="${dim}"><caption id="t-${dim}">${escapeHtml(caption)}</caption>
<thead><tr><th scope="col">${escapeHtml(header)}</th><th scope="col" class="num">Scans</th><th scope="col">Share</th></tr></thead><tbody>${body}</tbody></table></section>`;
}

export interface PageView {
  /** The page's h1 and title. */
  heading: string;
  /** Under the heading (the short link and where it goes), as text. */
  subtitle?: string;
  range: PageRange;
  result: PageResult;
  /** The page's own URL with other query parameters (the range form's links keep the token and link). */
  urlWith: (params: Record<string, string | undefined>) => string;
  /** Hidden fields the range form carries (token, linkId). */
  keep: Record<string, string>;
  /** Where the live stream is (with its query); none: no live updates. */
  streamUrl?: string;
  /** The workspace page: every link scanned in the range, and where each one's own view is. */
  links?: { rows: RankedRow[]; href: (value: string) => string; /** Scanned links not listed. */ more: number };
  /** Shown above the range form (the workspace page's sign-out, a link back). */
  nav?: string;
}

function rangeForm(view: PageFrame): string {
  const { range } = view;
  const presets = (Object.keys(PRESETS) as (keyof typeof PRESETS)[]).map((p) =>
    `<a href="${escapeHtml(view.urlWith({ range: p }))}"${range.preset === p ? ' aria-current="page"' : ''}>Last ${p === '24h' ? '24 hours' : `${PRESETS[p]} days`}</a>`).join('');
  const day = (d: Date) => d.toISOString().slice(0, 10);
  const lastDay = new Date(range.to.getTime() - 1);
  const hidden = Object.entries(view.keep).map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`).join('');
  return `<nav class="presets" aria-label="Ranges">${presets}</nav>
<form class="range" method="get">${hidden}
<label>From (UTC)<input type="date" name="from" value="${day(range.from)}" required></label>
<label>To (UTC, included)<input type="date" name="to" value="${day(lastDay)}" required></label>
<label>Buckets<select name="interval"><option value="hour"${range.interval === 'hour' ? ' selected' : ''}>Hours</option><option value="day"${range.interval === 'day' ? ' selected' : ''}>Days</option></select></label>
<button type="submit">Show</button></form>`;
}

/** What a page is before its numbers are known. */
export type PageFrame = Omit<PageView, 'result' | 'links'>;

/**
 * The page's start: the document's head and the page's header (title, ranges, the range shown),
 * all known before the numbers are read, so it is sent at once (page-routes.ts).
 */
export function pageStart(view: PageFrame): string {
  const { range } = view;
  const unit = range.interval === 'hour' ? 'hour' : 'day';
  const from = range.from.toISOString().slice(0, 16).replace('T', ' ');
  const to = range.to.toISOString().slice(0, 16).replace('T', ' ');
  const live = view.streamUrl
    ? ` <span id="live-status" role="status" data-state="off">Live updates need JavaScript</span>`
    : '';
  return `${documentStart(view.heading)}<header><h1>${escapeHtml(view.heading)}</h1>${view.subtitle ? `<p class="sub">${escapeHtml(view.subtitle)}</p>` : ''}${view.nav ?? ''}
${rangeForm(view)}<p class="sub">${from} to ${to} UTC, by ${unit}.${live}</p></header>
`;
}

/** In place of the numbers when they could not be read (the page's start was sent already). */
export const pageFailed = `<main><div class="card" role="alert"><p>The analytics could not be loaded just now. Reload the page to try again.</p></div></main>${documentEnd(false)}`;

/** The rest of the page: the numbers, the chart and the tables, then the script. */
export function pageRest(view: PageFrame, result: PageResult, links?: PageView['links']): string {
  const { range } = view;
  const total = result.totalScans;
  const qr = result.triggers.find((t) => t.trigger === 'qr')?.scans ?? 0;
  const clicks = result.triggers.find((t) => t.trigger === 'link')?.scans ?? 0;
  const series = result.timeseries;
  const unit = range.interval === 'hour' ? 'hour' : 'day';
  const seriesRows = series.map((b) => `<tr data-start="${b.start}"><th scope="row">${escapeHtml(bucketLabel(b.start, range.interval))}</th><td class="num" data-count="${b.scans}">${fmt.format(b.scans)}</td></tr>`).join('');
  const rows = (items: PageResult['countries'], label: (v: string) => string = (v) => v): RankedRow[] =>
    items.map((t) => ({ value: t.value, label: label(t.value), count: t.count }));
  const body = `<main${view.streamUrl ? ` data-stream="${escapeHtml(view.streamUrl)}"` : ''} data-from="${range.from.getTime()}" data-to="${range.to.getTime()}" data-interval="${range.interval}"${range.preset ? ' data-grows="true"' : ''}>
<h2 class="sr-only">Totals</h2>
<dl class="stats card">
<div class="stat"><dt>Scans</dt><dd data-stat="total" data-count="${total}">${fmt.format(total)}</dd></div>
<div class="stat"><dt>Unique visitors <small>(estimated, as loaded)</small></dt><dd data-stat="visitors" data-count="${result.uniqueVisitors}">${fmt.format(result.uniqueVisitors)}</dd></div>
<div class="stat"><dt>QR code scans</dt><dd data-stat="qr" data-count="${qr}">${fmt.format(qr)}</dd></div>
<div class="stat"><dt>Link clicks</dt><dd data-stat="link" data-count="${clicks}">${fmt.format(clicks)}</dd></div>
</dl>
<section class="card" aria-labelledby="chart-title"><h2 id="chart-title">Scans per ${unit}</h2>
${timeChart(series, range.interval, 'chart-title')}
<details><summary>Scans per ${unit} as a table</summary><table data-series><caption class="sr-only">Scans per ${unit}</caption><thead><tr><th scope="col">${unit === 'hour' ? 'Hour' : 'Day'} (UTC)</th><th scope="col" class="num">Scans</th></tr></thead><tbody>${seriesRows}</tbody></table></details>
</section>
${links ? `<div class="links">${rankedTable('link', 'Links', 'Short link', links.rows, total, links.href)}${links.more > 0 ? `<p class="sub">And ${fmt.format(links.more)} more links scanned in this range, fewer times each.</p>` : ''}</div>` : ''}
<div class="grid">
${rankedTable('country', 'Countries', 'Country', rows(result.countries, countryName), total)}
${rankedTable('device', 'Devices', 'Device', rows(result.devices), total)}
${rankedTable('browser', 'Browsers', 'Browser', rows(result.browsers), total)}
${rankedTable('referrer', 'Referrers', 'Referrer', rows(result.referrers), total)}
${rankedTable('trigger', 'QR code or link', 'How', [{ value: 'qr', label: 'QR code scan', count: qr }, { value: 'link', label: 'Link click', count: clicks }], total)}
${rankedTable('variant', 'A/B test variants', 'Variant', rows(result.variants), total, undefined, 'No A/B test scans in this range.')}
</div></main>
<footer><p>Times are UTC. Scans by bots are not counted. Countries, devices, browsers, referrers and variants show the top 10. Unique visitors are an estimate (about 1.6% error), as of the page's loading.</p></footer>`;
  return `${body}${documentEnd(view.streamUrl !== undefined)}`;
}

/** A small page of one message (not found, a refusal, a form around it). */
export function messagePage(title: string, inner: string): string {
  return document(title, `<header><h1>${escapeHtml(title)}</h1></header><main><div class="card">${inner}</div></main>`, false);
}
