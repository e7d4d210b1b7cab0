// The analytics page's one script, inline (no build step, no file to fetch) and
// allowed by its hash in the page's Content-Security-Policy (html-page.ts). It
// opens the page's live stream (EventSource, which resumes with Last-Event-ID by
// itself) and counts each `scan` event into the numbers the page shows: the
// totals, the chart's bar of its bucket (rescaling the chart when a bar outgrows
// it), the series table, and each ranked table's row (added when new, re-sorted).
// It writes text only (textContent), never markup. Without it the page is the
// same as loaded.
export const PAGE_SCRIPT = `(() => {
  const main = document.querySelector('main[data-stream]');
  const status = document.getElementById('live-status');
  if (!main || !window.EventSource) return;
  const from = Number(main.dataset.from), to = Number(main.dataset.to);
  const nf = new Intl.NumberFormat('en');
  const regions = new Intl.DisplayNames(['en'], { type: 'region' });
  const chart = main.querySelector('svg.chart');
  const bars = chart ? Array.from(chart.querySelectorAll('rect.bar')) : [];
  const seriesCells = Array.from(main.querySelectorAll('table[data-series] tbody td[data-count]'));
  const totalEl = main.querySelector('[data-stat="total"]');
  const show = (state, text) => { if (status) { status.dataset.state = state; status.textContent = text; } };
  const setCount = (el, n) => { el.dataset.count = String(n); el.textContent = nf.format(n); };
  const bump = (el) => setCount(el, Number(el.dataset.count) + 1);
  const niceMax = (n) => {
    if (n <= 1) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(n)));
    for (const s of [1, 2, 2.5, 5, 10]) if (s * p >= n) return s * p;
    return 10 * p;
  };
  const label = (dim, value) => {
    if (dim === 'country') { try { return regions.of(value) + ' (' + value + ')'; } catch (e) { return value; } }
    if (dim === 'trigger') return value === 'qr' ? 'QR code scan' : 'Link click';
    return value;
  };
  function drawBars() {
    const top = Number(chart.dataset.top), height = Number(chart.dataset.plotHeight);
    let max = Number(chart.dataset.max);
    const highest = Math.max(0, ...bars.map((b) => Number(b.dataset.scans)));
    if (highest > max) {
      max = niceMax(highest);
      chart.dataset.max = String(max);
      for (const t of chart.querySelectorAll('text[data-fraction]')) t.textContent = nf.format(Number(t.dataset.fraction) * max);
    }
    for (const b of bars) {
      const h = (Number(b.dataset.scans) / max) * height;
      b.setAttribute('height', h.toFixed(2));
      b.setAttribute('y', (top + height - h).toFixed(2));
    }
  }
  function countInChart(t) {
    for (let i = bars.length - 1; i >= 0; i--) {
      if (Number(bars[i].dataset.start) > t) continue;
      const bar = bars[i];
      const n = Number(bar.dataset.scans) + 1;
      bar.dataset.scans = String(n);
      const title = bar.querySelector('title');
      if (title) title.textContent = title.textContent.replace(/: [0-9,]+ scans$/, ': ' + nf.format(n) + ' scans');
      if (seriesCells[i]) bump(seriesCells[i]);
      drawBars();
      return;
    }
  }
  function countInTable(dim, value) {
    const table = main.querySelector('table[data-dim="' + dim + '"]');
    if (!table || value === null || value === undefined || value === '') return;
    const body = table.tBodies[0];
    let row = Array.from(body.rows).find((r) => r.dataset.value === value);
    if (!row) {
      for (const empty of body.querySelectorAll('tr.empty-row')) empty.remove();
      row = document.createElement('tr');
      row.dataset.value = value;
      const th = document.createElement('th');
      th.scope = 'row';
      th.textContent = label(dim, value);
      const count = document.createElement('td');
      count.className = 'num';
      count.dataset.count = '0';
      row.append(th, count);
      if (dim === 'variant') {
        const visitors = document.createElement('td');
        visitors.className = 'num';
        visitors.textContent = '\\u2013';
        row.append(visitors);
      } else {
        const share = document.createElement('td');
        share.className = 'share';
        const pct = document.createElement('span');
        pct.className = 'pct';
        const meter = document.createElement('span');
        meter.className = 'meter';
        meter.setAttribute('aria-hidden', 'true');
        meter.append(document.createElement('span'));
        share.append(pct, meter);
        row.append(share);
      }
      body.append(row);
    }
    bump(row.querySelector('[data-count]'));
    const sorted = Array.from(body.rows).sort((a, b) => Number(b.querySelector('[data-count]').dataset.count) - Number(a.querySelector('[data-count]').dataset.count));
    for (const r of sorted) body.append(r);
  }
  function updateShares() {
    const total = Number(totalEl.dataset.count);
    for (const cell of main.querySelectorAll('td.share')) {
      const n = Number(cell.parentElement.querySelector('[data-count]').dataset.count);
      const p = total > 0 ? (100 * n) / total : 0;
      cell.querySelector('.pct').textContent = p.toFixed(1) + '%';
      cell.querySelector('.meter span').style.width = p.toFixed(1) + '%';
    }
  }
  const stream = new EventSource(main.dataset.stream);
  show('connecting', 'Connecting\\u2026');
  stream.addEventListener('open', () => show('live', 'Live'));
  stream.addEventListener('error', () => show('off', stream.readyState === EventSource.CLOSED ? 'Live updates ended' : 'Reconnecting\\u2026'));
  stream.addEventListener('end', () => { stream.close(); show('off', 'Live updates ended; reload the page'); });
  stream.addEventListener('scan', (event) => {
    const scan = JSON.parse(event.data);
    if (!(scan.t >= from && scan.t < to)) return;
    bump(totalEl);
    const trigger = scan.trigger === 'qr' ? 'qr' : 'link';
    const stat = main.querySelector('[data-stat="' + trigger + '"]');
    if (stat) bump(stat);
    countInChart(scan.t);
    countInTable('country', scan.country);
    countInTable('device', scan.device);
    countInTable('browser', scan.browser);
    countInTable('referrer', scan.referrer || '(direct)');
    countInTable('trigger', trigger);
    countInTable('variant', scan.variant);
    countInTable('link', scan.shortId);
    updateShares();
  });
})();`;
