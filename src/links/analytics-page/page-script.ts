// The analytics page's one script, inline (no build step, no file to fetch) and
// allowed by its hash in the page's Content-Security-Policy (html-page.ts). It
// opens the page's live stream (EventSource, which resumes with Last-Event-ID by
// itself) and counts each `scan` event into the numbers the page shows: the
// totals, the chart's bar of its bucket (rescaling the chart when a bar outgrows
// it), the series table, and each ranked table's row (added when new, re-sorted).
// A range up to now (a preset) grows by a bucket when a scan comes after its end
// (the hour or day turned while the page was open).
// It writes text only (textContent), never markup. Without it the page is the
// same as loaded.
export const PAGE_SCRIPT = `(() => {
  const main = document.querySelector('main[data-stream]');
  const status = document.getElementById('live-status');
  if (!main || !window.EventSource) return;
  const from = Number(main.dataset.from);
  // The page's state is its markup: the range's end, the bars and the table's cells are read when needed.
  const rangeEnd = () => Number(main.dataset.to);
  const step = main.dataset.interval === 'hour' ? 3600000 : 86400000;
  const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const bucketLabel = (ms) => {
    const d = new Date(ms);
    const day = MONTHS[d.getUTCMonth()] + ' ' + d.getUTCDate();
    return step === 3600000 ? day + ', ' + String(d.getUTCHours()).padStart(2, '0') + ':00' : day;
  };
  const nf = new Intl.NumberFormat('en');
  const regions = new Intl.DisplayNames(['en'], { type: 'region' });
  const chart = main.querySelector('svg.chart');
  const seriesBody = main.querySelector('table[data-series] tbody');
  const barsNow = () => (chart ? Array.from(chart.querySelectorAll('rect.bar')) : []);
  const cellsNow = () => (seriesBody ? Array.from(seriesBody.querySelectorAll('td[data-count]')) : []);
  const totalEl = main.querySelector('[data-stat="total"]');
  const show = (state, text) => { if (status) { status.dataset.state = state; status.textContent = text; } };
  const setCount = (el, n) => { el.dataset.count = String(n); el.textContent = nf.format(n); };
  const bump = (el) => setCount(el, Number(el.dataset.count) + 1);
  // As time-chart.ts's niceMax.
  const niceMax = (n) => {
    if (n <= 1) return 1;
    if (n <= 10) return Math.ceil(n / 2) * 2;
    const p = Math.pow(10, Math.floor(Math.log10(n)));
    for (const s of [1, 2, 3, 4, 5, 6, 8]) if (s * p >= n) return s * p;
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
    const bars = barsNow();
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
  /** Appends the bucket that starts at the range's end, and lays the bars out again. */
  function grow() {
    const start = rangeEnd();
    main.dataset.to = String(start + step);
    const bars = barsNow();
    const svgNs = 'http://www.w3.org/2000/svg';
    const bar = document.createElementNS(svgNs, 'rect');
    bar.setAttribute('class', 'bar');
    bar.dataset.start = String(start);
    bar.dataset.scans = '0';
    const title = document.createElementNS(svgNs, 'title');
    title.textContent = bucketLabel(start) + ': 0 scans';
    bar.append(title);
    bars.at(-1).after(bar);
    bars.push(bar);
    const left = Number(chart.dataset.left), width = Number(chart.dataset.plotWidth);
    const each = width / bars.length;
    const gap = each > 4 ? Math.min(2, each * 0.15) : 0;
    bars.forEach((b, i) => {
      b.setAttribute('x', (left + i * each + gap / 2).toFixed(2));
      b.setAttribute('width', Math.max(0.5, each - gap).toFixed(2));
    });
    for (const label of chart.querySelectorAll('text[data-index]')) label.setAttribute('x', (left + Number(label.dataset.index) * each + each / 2).toFixed(2));
    if (seriesBody) {
      const row = document.createElement('tr');
      row.dataset.start = String(start);
      const th = document.createElement('th');
      th.scope = 'row';
      th.textContent = bucketLabel(start);
      const cell = document.createElement('td');
      cell.className = 'num';
      setCount(cell, 0);
      row.append(th, cell);
      seriesBody.append(row);
    }
  }
  function countInChart(t) {
    const bars = barsNow();
    for (let i = bars.length - 1; i >= 0; i--) {
      if (Number(bars[i].dataset.start) > t) continue;
      const bar = bars[i];
      const n = Number(bar.dataset.scans) + 1;
      bar.dataset.scans = String(n);
      const title = bar.querySelector('title');
      if (title) title.textContent = title.textContent.replace(/: [0-9,]+ scans$/, ': ' + nf.format(n) + ' scans');
      const cell = cellsNow()[i];
      if (cell) bump(cell);
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
      const share = document.createElement('td');
      share.className = 'share';
      const pct = document.createElement('span');
      pct.className = 'pct';
      const meter = document.createElement('span');
      meter.className = 'meter';
      meter.setAttribute('aria-hidden', 'true');
      meter.append(document.createElement('span'));
      share.append(pct, meter);
      row.append(th, count, share);
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
    if (main.dataset.grows === 'true' && barsNow().length > 0) {
      while (scan.t >= rangeEnd() && scan.t < Date.now() + step) {
        // The last bucket may end after the range (today's, of a range up to this hour): the range first takes the rest of it.
        const lastEnd = Number(barsNow().at(-1).dataset.start) + step;
        if (rangeEnd() < lastEnd) main.dataset.to = String(lastEnd);
        else grow();
      }
    }
    if (!(scan.t >= from && scan.t < rangeEnd())) return;
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
