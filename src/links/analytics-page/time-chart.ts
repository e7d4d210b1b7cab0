// Scans over time as an inline SVG bar chart, drawn on the server so the page
// shows it without script. Each bar carries its bucket's start and count
// (data-start, data-scans) and the plot its geometry, so the page's script can
// grow a bar, and rescale them all, as live scans arrive (page-script.ts).
// The same numbers are on the page as a table (page-html.ts).
import { escapeHtml } from '../../platform/http/html-page.ts';

export const CHART = { width: 960, height: 260, left: 56, right: 8, top: 12, bottom: 30 } as const;

/**
 * A round top for the axis at or above n: up to 10, the next even number; above, the next of 1, 2,
 * 3, 4, 5, 6 or 8 times a power of ten. Its middle gridline is a whole number too.
 */
export function niceMax(n: number): number {
  if (n <= 1) return 1;
  if (n <= 10) return Math.ceil(n / 2) * 2;
  const power = 10 ** Math.floor(Math.log10(n));
  for (const step of [1, 2, 3, 4, 5, 6, 8]) if (step * power >= n) return step * power;
  return 10 * power;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** A bucket's start as people read it, in UTC: "Dec 6, 14:00" for hours, "Dec 6" for days. */
export function bucketLabel(ms: number, interval: 'hour' | 'day'): string {
  const d = new Date(ms);
  const day = `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
  return interval === 'hour' ? `${day}, ${String(d.getUTCHours()).padStart(2, '0')}:00` : day;
}

const fmt = new Intl.NumberFormat('en');

export function timeChart(series: readonly { start: number; scans: number }[], interval: 'hour' | 'day', titleId: string): string {
  const { width, height, left, right, top, bottom } = CHART;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const max = niceMax(Math.max(0, ...series.map((b) => b.scans)));
  const step = plotW / Math.max(1, series.length);
  const gap = step > 4 ? Math.min(2, step * 0.15) : 0;
  const bars = series.map((b, i) => {
    const h = (b.scans / max) * plotH;
    const x = left + i * step + gap / 2;
    return `<rect class="bar" data-start="${b.start}" data-scans="${b.scans}" x="${x.toFixed(2)}" y="${(top + plotH - h).toFixed(2)}" width="${Math.max(0.5, step - gap).toFixed(2)}" height="${h.toFixed(2)}"><title>${escapeHtml(bucketLabel(b.start, interval))}: ${fmt.format(b.scans)} scans</title></rect>`;
  }).join('');
  // Three gridlines with their values; the script rewrites the values when the top changes.
  const grid = [0, 0.5, 1].map((f) => {
    const y = (top + plotH - f * plotH).toFixed(2);
    return `<line class="grid" x1="${left}" x2="${width - right}" y1="${y}" y2="${y}"></line><text class="axis" data-fraction="${f}" x="${left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${fmt.format(f * max)}</text>`;
  }).join('');
  // About six labels along the time axis, at whole buckets.
  const every = Math.max(1, Math.ceil(series.length / 6));
  const labels = series.map((b, i) => (i % every === 0
    ? `<text class="axis" data-index="${i}" x="${(left + i * step + step / 2).toFixed(2)}" y="${height - 10}" text-anchor="middle">${escapeHtml(bucketLabel(b.start, interval))}</text>`
    : '')).join('');
  return `<svg class="chart" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="${titleId}" data-max="${max}" data-top="${top}" data-plot-height="${plotH}" data-left="${left}" data-plot-width="${plotW}">${grid}${bars}${labels}</svg>`;
}
