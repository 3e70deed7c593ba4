/*
 * app.js - wsr view: the page's logic, plain JavaScript, no framework, no CDN.
 *
 * Invariants:
 *   - Live mode (served by wsr-view) fetches /api/NAME for the visible
 *     window at the canvas's pixel width, so the server sends at most a few
 *     items per pixel and lane; static mode (the HTML report) reads the same
 *     answers from the <script id="wsr-data"> element and never fetches.
 *   - Times are nanoseconds relative to the trace start (as the API sends).
 *   - Only the answer to the latest request is drawn (a sequence number);
 *     until it arrives, the previous data is redrawn at the new scale.
 *   - window.__wsr exposes what the browser tests and the measurements read:
 *     the visible range, the drawn slices' boxes, first paint and zoom times
 *     (firstPaintMs: the first timeline drawn, the server's sampled overview
 *     on a cold start; fullPaintMs: the first drawn from the full lanes).
 *   - Until the server has indexed the lanes, /api/timeline answers from a
 *     sampled overview ("preview": true); the page draws it, says so, and
 *     fetches the window again once /api/status says the lanes are in.
 * Concurrency: the browser's single thread; fetches resolve in any order.
 */
'use strict';

(function () {
  const $ = (id) => document.getElementById(id);
  const dataEl = $('wsr-data');
  const STATIC = dataEl ? JSON.parse(dataEl.textContent) : null;
  const SVGNS = 'http://www.w3.org/2000/svg';

  const LABEL_W = 64;
  const AXIS_H = 22;
  const P_H = 28;
  const M_H = 15;
  const C_H = 40;
  const GAP = 8;

  const STATE_COLORS = {
    idle: '#d5d8de', running: '#7cc47f', spinning: '#f59f00', syscall: '#9c36b5',
    parked: '#a5b4c3', no_p: '#ffe08a', other: '#333333',
  };
  const COUNTER_LABELS = {
    idle_ps: 'idle Ps', spinning_ms: 'spinning Ms', runnable_gs: 'runnable Gs',
    global_len: 'global queue', running_gs: 'running Gs',
  };
  const SHOWN_COUNTERS = ['idle_ps', 'spinning_ms', 'runnable_gs', 'global_len'];
  const SOURCE_COLORS = ['#4263eb', '#2f9e44', '#f08c00', '#e03131', '#7048e8', '#0c8599', '#868e96'];

  const W = window.__wsr = {
    static: !!STATIC, t0: 0, t1: 1, slices: [], firstPaintMs: null, fullPaintMs: null,
    preview: false, zoomMs: [], lastZoomMs: null, ready: false, requests: 0,
  };

  let info = null;
  let timeline = null;
  let counters = null;
  let seq = 0;
  let pending = null;
  let zoomStart = null;
  let fetchTimer = null;

  /* ---------- helpers ---------- */

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVGNS, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function fmtNs(ns) {
    const a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(a >= 1e10 ? 1 : 3) + ' s';
    if (a >= 1e6) return (ns / 1e6).toFixed(a >= 1e7 ? 1 : 3) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toFixed(a >= 1e4 ? 1 : 2) + ' µs';
    return Math.round(ns) + ' ns';
  }

  /* An axis label: the unit fits the time, the decimals fit the tick step. */
  function fmtTick(t, step) {
    const a = Math.max(Math.abs(t), step);
    const [unit, name] = a >= 1e9 ? [1e9, ' s'] : a >= 1e6 ? [1e6, ' ms'] : a >= 1e3 ? [1e3, ' µs'] : [1, ' ns'];
    const dec = Math.max(0, Math.min(9, Math.ceil(-Math.log10(step / unit) - 1e-9)));
    return (t / unit).toFixed(dec) + name;
  }

  function gColor(g) {
    const h = (g * 137.508) % 360;
    return 'hsl(' + h.toFixed(1) + ',62%,' + (48 + (g % 3) * 6) + '%)';
  }

  function setStatus(s) { $('status').textContent = s; }

  function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }

  /* The per-run token from the URL wsr view printed (#token=...): the server refuses /api/ without it. */
  const TOKEN = new URLSearchParams(location.hash.slice(1)).get('token') || '';

  async function api(name, params) {
    if (STATIC) {
      if (!(name in STATIC)) throw new Error(name + ' is not in this static report');
      return STATIC[name];
    }
    const qs = new URLSearchParams(params || {}).toString();
    W.requests++;
    const r = await fetch('/api/' + name + (qs ? '?' + qs : ''), { headers: { 'X-WSR-Token': TOKEN } });
    const j = await r.json();
    if (!r.ok) throw new Error(j.error || (r.status + ' ' + r.statusText));
    return j;
  }

  /*
   * Waits until the server has indexed the lanes or built its overview (both
   * load in the background); the counters may come later: countersReady says
   * whether to ask for them, lanesReady whether the timeline is the full one.
   */
  let countersReady = !!STATIC;
  let lanesReady = !!STATIC;
  let lanesWait = null;
  async function waitIndexed() {
    if (STATIC) return;
    for (let i = 0; ; i++) {
      const s = await api('status');
      if (s.lanes < 0 || s.counters < 0) throw new Error('indexing failed (see the server log)');
      countersReady = s.counters === 1;
      lanesReady = s.lanes === 1;
      if (s.lanes === 1 || s.preview === 1) return;
      setStatus('indexing the trace' + '.'.repeat(1 + (i % 3)));
      await sleep(100);
    }
  }

  /* Shows the overview's note and the counters' wait in the status line. */
  function loadingStatus() {
    const parts = [];
    if (!lanesReady) parts.push('sampled overview: indexing the full trace…');
    if (!countersReady) parts.push('summarising the counters…');
    setStatus(parts.join(' '));
  }

  /*
   * Polls until the lanes are indexed, then reads /api/info again (the same Ps
   * and Ms, but it costs nothing to be sure) and fetches the window from them.
   */
  function waitLanes() {
    if (lanesWait) return lanesWait;
    lanesWait = (async () => {
      for (;;) {
        await sleep(200);
        const s = await api('status');
        if (s.lanes < 0) { setStatus('error: indexing the trace failed (see the server log)'); return; }
        if (s.lanes === 1) break;
      }
      const fresh = await api('info');
      const relayout = fresh.ps.join() !== info.ps.join() || fresh.ms.join() !== info.ms.join();
      info = fresh;
      lanesReady = true;
      if (relayout) resize();
      loadingStatus();
      await fetchWindow();
    })();
    return lanesWait;
  }

  /* Polls until the counters are summarised, then fetches the window again. */
  async function waitCounters() {
    for (;;) {
      await sleep(250);
      const s = await api('status');
      if (s.counters < 0) { setStatus('error: summarising the counters failed'); return; }
      if (s.counters === 1) break;
    }
    countersReady = true;
    fetchWindow();
  }

  /* Waits (no 503 polling) until /api/status says a background part is loaded. */
  async function whenLoaded(part) {
    if (STATIC) return;
    for (;;) {
      const s = await api('status');
      if (s[part] === 1) return;
      if (s[part] < 0) throw new Error('loading the ' + part + ' failed (see the server log)');
      await sleep(300);
    }
  }

  /* Answers that the server builds in the background say {"loading": true} until ready. */
  async function apiReady(name) {
    for (;;) {
      const r = await api(name);
      if (!r.loading) return r;
      await sleep(300);
    }
  }

  /* ---------- timeline ---------- */

  const canvas = $('timeline');
  const ctx = canvas.getContext('2d');

  function layout() {
    const np = info.ps.length;
    const nm = info.ms.length;
    const pTop = AXIS_H;
    const mTop = pTop + np * P_H + GAP;
    const cTop = mTop + nm * M_H + GAP;
    const height = cTop + SHOWN_COUNTERS.length * C_H + 4;
    return { pTop, mTop, cTop, height };
  }

  function plotWidth() { return Math.max(50, canvas.clientWidth - LABEL_W); }

  function X(t) { return LABEL_W + (t - W.t0) / (W.t1 - W.t0) * plotWidth(); }

  function T(x) { return W.t0 + (x - LABEL_W) / plotWidth() * (W.t1 - W.t0); }

  function resize() {
    const L = layout();
    const dpr = window.devicePixelRatio || 1;
    canvas.style.height = L.height + 'px';
    canvas.width = Math.round(canvas.clientWidth * dpr);
    canvas.height = Math.round(L.height * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    buildLabels(L);
  }

  function buildLabels(L) {
    const box = $('lane-labels');
    box.textContent = '';
    info.ps.forEach((p, i) => {
      const d = el('div', { class: 'lane-label', 'data-kind': 'p', 'data-id': p }, 'P' + p);
      d.style.top = (L.pTop + i * P_H + 4) + 'px';
      box.appendChild(d);
    });
    info.ms.forEach((m, i) => {
      const d = el('div', { class: 'lane-label', 'data-kind': 'm', 'data-id': m }, 'M' + m);
      d.style.top = (L.mTop + i * M_H) + 'px';
      box.appendChild(d);
    });
    SHOWN_COUNTERS.forEach((c, i) => {
      const d = el('div', { class: 'lane-label', 'data-kind': 'counter', 'data-id': c }, COUNTER_LABELS[c]);
      d.style.top = (L.cTop + i * C_H + 2) + 'px';
      box.appendChild(d);
    });
  }

  function niceStep(span, n) {
    const raw = span / n;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }

  function drawAxis(L) {
    const w = canvas.clientWidth;
    const step = niceStep(W.t1 - W.t0, Math.max(2, plotWidth() / 110));
    ctx.fillStyle = '#f5f6f8';
    ctx.fillRect(0, 0, w, AXIS_H);
    ctx.strokeStyle = '#e3e6ea';
    ctx.fillStyle = '#555';
    ctx.font = '10px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    ctx.beginPath();
    for (let t = Math.ceil(W.t0 / step) * step; t <= W.t1; t += step) {
      const x = Math.round(X(t)) + 0.5;
      ctx.moveTo(x, AXIS_H - 5);
      ctx.lineTo(x, L.height);
      ctx.fillText(fmtTick(t, step), x + 3, AXIS_H / 2);
    }
    ctx.stroke();
  }

  function drawRuns(lane, y) {
    const h = 18;
    for (const r of lane.runs) {
      const [s, e, g, n, busy] = r;
      const x0 = Math.max(LABEL_W, X(s));
      const x1 = Math.min(canvas.clientWidth, X(e));
      if (x1 < LABEL_W || x0 > canvas.clientWidth) continue;
      const w = Math.max(1, x1 - x0);
      ctx.globalAlpha = n > 1 ? 0.35 + 0.65 * Math.min(1, busy / Math.max(1, e - s)) : 1;
      ctx.fillStyle = gColor(g);
      ctx.fillRect(x0, y, w, h);
      ctx.globalAlpha = 1;
      if (n === 1) {
        W.slices.push({ x: x0, y: y, w: w, h: h, g: g, s: s, e: e, p: lane.p });
        if (w > 34) {
          ctx.save();
          ctx.beginPath();
          ctx.rect(x0, y, w, h);
          ctx.clip();
          ctx.fillStyle = '#fff';
          ctx.font = '10px system-ui, sans-serif';
          ctx.textBaseline = 'middle';
          ctx.fillText('G' + g, x0 + 3, y + h / 2);
          ctx.restore();
        }
      }
    }
  }

  /*
   * The critical path (dag_strand.critical, docs/workspan.md): its strands
   * outlined on the P lane that ran them. Loaded once through the SQL API,
   * a page of rows at a time (keyset on the strand id, under the API's row
   * limit), up to CRIT_MAX strands; absent from static reports.
   */
  const CRIT_MAX = 200000;
  const critSql = (after) => 'SELECT s.start_ts - t.start_ts AS s, s.end_ts - t.start_ts AS e, ' +
    's.g, r.p, s.id FROM dag_strand s JOIN g_state r ON r.g = s.g AND r.state = \'running\' AND ' +
    'r.start_ts <= s.start_ts AND r.end_ts >= s.end_ts, trace_info t ' +
    'WHERE s.critical = 1 AND s.id > ' + after + ' ORDER BY s.id LIMIT ' + info.sql_max_rows;

  async function loadCritical() {
    if (STATIC) return;
    const rows = [];
    let after = -1, more = true;
    try {
      while (more && rows.length < CRIT_MAX) {
        const r = await api('sql', { q: critSql(after) });
        if (!r.rows || r.error) return;
        for (const row of r.rows) rows.push(row);
        more = r.rows.length >= info.sql_max_rows;
        if (r.rows.length > 0) after = r.rows[r.rows.length - 1][4];
      }
    } catch (err) {
      return; /* a database without a DAG: nothing to outline */
    }
    W.critical = rows;
    canvas.dataset.criticalRows = String(rows.length) + (more ? '+' : '');
    draw();
  }

  function drawCritical(lane, y) {
    let n = 0;
    ctx.strokeStyle = '#000';
    ctx.lineWidth = 2;
    for (const [s, e, , p] of W.critical || []) {
      if (p !== lane.p) continue;
      const x0 = Math.max(LABEL_W, X(s));
      const x1 = Math.min(canvas.clientWidth, X(e));
      if (x1 < LABEL_W || x0 > canvas.clientWidth) continue;
      ctx.strokeRect(x0 + 1, y + 1, Math.max(1, x1 - x0 - 2), 16);
      n++;
    }
    ctx.lineWidth = 1;
    return n;
  }

  function drawStates(list, y, h) {
    for (const r of list) {
      const [s, e, code] = r;
      const x0 = Math.max(LABEL_W, X(s));
      const x1 = Math.min(canvas.clientWidth, X(e));
      if (x1 < LABEL_W || x0 > canvas.clientWidth) continue;
      ctx.fillStyle = STATE_COLORS[info.states[code]] || '#000';
      ctx.fillRect(x0, y, Math.max(1, x1 - x0), h);
    }
  }

  function drawCounters(L) {
    if (!counters) return;
    const px = counters.px;
    const span = (counters.t1 - counters.t0) / px;
    SHOWN_COUNTERS.forEach((name, i) => {
      const ser = counters.series[name];
      const y0 = L.cTop + i * C_H;
      const h = C_H - 8;
      let max = 1;
      for (const v of ser.max) if (v > max) max = v;
      ctx.fillStyle = '#fafbfc';
      ctx.fillRect(LABEL_W, y0, plotWidth(), h + 2);
      ctx.fillStyle = '#888';
      ctx.font = '9px system-ui, sans-serif';
      ctx.textBaseline = 'top';
      ctx.fillText('max ' + max, canvas.clientWidth - 60, y0);
      const Y = (v) => y0 + h + 1 - v / max * h;
      ctx.strokeStyle = 'rgba(47,111,223,0.35)';
      ctx.beginPath();
      for (let j = 0; j < px; j++) {
        if (ser.max[j] === ser.min[j]) continue;
        const x = X(counters.t0 + (j + 0.5) * span);
        if (x < LABEL_W || x > canvas.clientWidth) continue;
        ctx.moveTo(x, Y(ser.min[j]));
        ctx.lineTo(x, Y(ser.max[j]));
      }
      ctx.stroke();
      ctx.strokeStyle = '#2f6fdf';
      ctx.beginPath();
      let started = false;
      for (let j = 0; j < px; j++) {
        const x = X(counters.t0 + (j + 0.5) * span);
        if (x < LABEL_W || x > canvas.clientWidth) continue;
        if (!started) { ctx.moveTo(x, Y(ser.last[j])); started = true; } else ctx.lineTo(x, Y(ser.last[j]));
      }
      ctx.stroke();
    });
  }

  function draw() {
    if (!info) return;
    const L = layout();
    const w = canvas.clientWidth;
    ctx.clearRect(0, 0, w, L.height);
    drawAxis(L);
    W.slices = [];
    if (timeline) {
      let crit = 0;
      timeline.p.forEach((lane, i) => {
        const y = L.pTop + i * P_H + 2;
        drawStates(lane.states, y + 19, 5);
        drawRuns(lane, y);
        crit += drawCritical(lane, y);
      });
      canvas.dataset.critical = String(crit);
      timeline.m.forEach((lane, i) => drawStates(lane.states, L.mTop + i * M_H + 2, M_H - 4));
    }
    drawCounters(L);
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, AXIS_H, LABEL_W - 2, L.height);
    const r = $('range');
    r.dataset.t0 = String(Math.round(W.t0));
    r.dataset.t1 = String(Math.round(W.t1));
    r.textContent = 'visible ' + fmtNs(W.t0) + ' – ' + fmtNs(W.t1) + ' (' + fmtNs(W.t1 - W.t0) + ')';
  }

  function clampView() {
    const dur = info.duration_ns;
    let span = Math.max(1000, Math.min(W.t1 - W.t0, dur));
    if (W.t0 < 0) W.t0 = 0;
    if (W.t0 + span > dur) W.t0 = dur - span;
    W.t1 = W.t0 + span;
  }

  function scheduleFetch() {
    if (STATIC) {
      draw();
      if (zoomStart !== null) {
        W.lastZoomMs = performance.now() - zoomStart;
        W.zoomMs.push(W.lastZoomMs);
        zoomStart = null;
      }
      return;
    }
    draw();
    clearTimeout(fetchTimer);
    fetchTimer = setTimeout(fetchWindow, 15);
  }

  async function fetchWindow() {
    const my = ++seq;
    const args = { t0: Math.floor(W.t0), t1: Math.ceil(W.t1), px: Math.round(plotWidth()) };
    try {
      const [tl, cn] = await Promise.all([api('timeline', args),
        countersReady ? api('counters', args) : Promise.resolve(null)]);
      if (my !== seq) return;
      timeline = tl;
      if (cn) counters = cn;
      W.preview = !!tl.preview;
      draw();
      if (W.firstPaintMs === null) W.firstPaintMs = performance.now();
      if (W.fullPaintMs === null && !tl.preview) W.fullPaintMs = performance.now();
      if (tl.preview) waitLanes();
      if (zoomStart !== null) {
        W.lastZoomMs = performance.now() - zoomStart;
        W.zoomMs.push(W.lastZoomMs);
        zoomStart = null;
      }
      canvas.dataset.seq = String(my);
    } catch (err) {
      setStatus('error: ' + err.message);
    }
  }

  function zoomAt(x, factor) {
    const tc = T(x);
    W.t0 = tc - (tc - W.t0) * factor;
    W.t1 = tc + (W.t1 - tc) * factor;
    clampView();
    zoomStart = performance.now();
    scheduleFetch();
  }

  function installTimelineEvents() {
    canvas.addEventListener('wheel', (e) => {
      e.preventDefault();
      const rect = canvas.getBoundingClientRect();
      const x = Math.max(LABEL_W, e.clientX - rect.left);
      const d = Math.max(-300, Math.min(300, e.deltaY));
      zoomAt(x, Math.exp(d * 0.0025));
    }, { passive: false });

    let drag = null;
    canvas.addEventListener('mousedown', (e) => {
      const rect = canvas.getBoundingClientRect();
      drag = { x: e.clientX, y: e.clientY - rect.top, t0: W.t0, t1: W.t1, moved: false };
      canvas.classList.add('dragging');
    });
    window.addEventListener('mousemove', (e) => {
      if (!drag) return;
      const dx = e.clientX - drag.x;
      if (Math.abs(dx) > 3) drag.moved = true;
      if (!drag.moved) return;
      const dt = dx / plotWidth() * (drag.t1 - drag.t0);
      W.t0 = drag.t0 - dt;
      W.t1 = drag.t1 - dt;
      clampView();
      scheduleFetch();
    });
    window.addEventListener('mouseup', (e) => {
      if (!drag) return;
      canvas.classList.remove('dragging');
      const d = drag;
      drag = null;
      if (d.moved) return;
      const rect = canvas.getBoundingClientRect();
      const x = e.clientX - rect.left;
      const y = e.clientY - rect.top;
      const hit = W.slices.find((b) => x >= b.x - 1 && x <= b.x + b.w + 1 && y >= b.y && y <= b.y + b.h);
      if (hit) showG(hit);
    });
    canvas.addEventListener('dblclick', () => {
      W.t0 = 0;
      W.t1 = info.duration_ns;
      zoomStart = performance.now();
      scheduleFetch();
    });
    $('zoom-in').addEventListener('click', () => zoomAt(LABEL_W + plotWidth() / 2, 0.5));
    $('zoom-out').addEventListener('click', () => zoomAt(LABEL_W + plotWidth() / 2, 2));
    $('zoom-reset').addEventListener('click', () => {
      W.t0 = 0;
      W.t1 = info.duration_ns;
      zoomStart = performance.now();
      scheduleFetch();
    });
    window.addEventListener('resize', () => { resize(); scheduleFetch(); });
  }

  function kvTable(rows) {
    const t = el('table');
    for (const [k, v] of rows) {
      const tr = el('tr');
      tr.appendChild(el('td', { class: 'l' }, k));
      tr.appendChild(el('td', { class: 'l' }, v === null || v === undefined ? '—' : String(v)));
      t.appendChild(tr);
    }
    return t;
  }

  async function showG(hit) {
    const box = $('details');
    box.textContent = '';
    const head = el('div');
    head.appendChild(el('strong', { id: 'details-g', 'data-g': hit.g }, 'G' + hit.g));
    head.appendChild(document.createTextNode(' ran on P' + hit.p + ' from ' + fmtNs(hit.s) + ' to ' + fmtNs(hit.e) +
      ' (' + fmtNs(hit.e - hit.s) + ')'));
    box.appendChild(head);
    if (STATIC) {
      box.appendChild(el('p', { class: 'note' }, 'Open the database with `wsr view` for the G\'s history.'));
      return;
    }
    try {
      const d = await api('g', { g: hit.g, t: hit.s });
      const g = d.info || {};
      const run = d.run || {};
      const ready = d.ready || {};
      box.appendChild(kvTable([
        ['G', d.g],
        ['parent', g.parent === 0 ? 'none (main)' : g.parent],
        ['created at', g.created !== undefined ? fmtNs(g.created) : null],
        ['how it got here', ready.source ? ready.source + (ready.queued_on !== null && ready.queued_on !== undefined ? ' (queued on P' + ready.queued_on + ')' : '') : null],
        ['made runnable by', ready.ready_reason],
        ['scheduling latency', ready.latency_ns !== undefined ? fmtNs(ready.latency_ns) : null],
        ['ran on', run.p !== undefined ? 'P' + run.p + ' / M' + run.m : null],
        ['ran for', run.ran_ns !== undefined ? fmtNs(run.ran_ns) : null],
        ['why it stopped', run.stop_reason + (run.cut ? ' (cut by the end of the trace)' : '')],
        ['runs / stolen', g.runs !== undefined ? g.runs + ' / ' + g.stolen : null],
        ['total running / runnable / waiting', g.run_ns !== undefined ? fmtNs(g.run_ns) + ' / ' + fmtNs(g.runnable_ns) + ' / ' + fmtNs(g.waiting_ns) : null],
        ['ended', g.end_reason ? g.end_reason + ' at ' + fmtNs(g.end) : 'alive at the end of the trace'],
      ]));
    } catch (err) {
      box.appendChild(el('p', { class: 'error' }, err.message));
    }
  }

  function drawLegend() {
    const lg = $('legend');
    lg.textContent = '';
    const add = (color, text) => {
      const s = el('span');
      const sw = el('span', { class: 'sw' });
      sw.style.background = color;
      s.appendChild(sw);
      s.appendChild(document.createTextNode(text));
      lg.appendChild(s);
    };
    add('linear-gradient(90deg,#e8590c,#4263eb,#2f9e44)', 'G runs (colour per G; faded: several Gs narrower than a pixel)');
    for (const s of ['idle', 'running', 'spinning', 'syscall', 'parked', 'no_p']) add(STATE_COLORS[s], s);
  }

  /* ---------- steal graph and matrix ---------- */

  function drawSteals(st) {
    const g = $('steal-graph');
    g.textContent = '';
    const ps = info.ps;
    const n = ps.length;
    const cx = 210, cy = 180, R = n > 1 ? 130 : 0;
    const pos = {};
    ps.forEach((p, i) => {
      const a = -Math.PI / 2 + 2 * Math.PI * i / Math.max(1, n);
      pos[p] = [cx + R * Math.cos(a), cy + R * Math.sin(a)];
    });
    const defs = svg('defs');
    const marker = svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: '9', refY: '5', markerWidth: '12', markerHeight: '12', markerUnits: 'userSpaceOnUse', orient: 'auto-start-reverse' });
    marker.appendChild(svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', fill: '#2f6fdf' }));
    defs.appendChild(marker);
    g.appendChild(defs);
    let max = 1;
    for (const e of st.edges) max = Math.max(max, e.steals);
    const nodeR = 18;
    for (const e of st.edges) {
      const a = pos[e.thief], b = pos[e.victim];
      if (!a || !b) continue;
      let d;
      if (e.thief === e.victim) {
        d = 'M ' + (a[0] - 8) + ' ' + (a[1] - nodeR) + ' C ' + (a[0] - 30) + ' ' + (a[1] - 60) + ' ' + (a[0] + 30) + ' ' + (a[1] - 60) + ' ' + (a[0] + 8) + ' ' + (a[1] - nodeR);
      } else {
        const dx = b[0] - a[0], dy = b[1] - a[1];
        const len = Math.hypot(dx, dy);
        const ux = dx / len, uy = dy / len;
        const sx = a[0] + ux * nodeR, sy = a[1] + uy * nodeR;
        const ex = b[0] - ux * (nodeR + 2), ey = b[1] - uy * (nodeR + 2);
        /* Curve to the right of the direction so A->B and B->A do not overlap. */
        const mx = (sx + ex) / 2 - uy * 28, my = (sy + ey) / 2 + ux * 28;
        d = 'M ' + sx.toFixed(1) + ' ' + sy.toFixed(1) + ' Q ' + mx.toFixed(1) + ' ' + my.toFixed(1) + ' ' + ex.toFixed(1) + ' ' + ey.toFixed(1);
      }
      const path = svg('path', {
        class: 'edge', d: d, 'marker-end': 'url(#arrow)',
        'stroke-width': (1 + 7 * e.steals / max).toFixed(2),
        'data-thief': e.thief, 'data-victim': e.victim, 'data-steals': e.steals, 'data-gs': e.gs,
      });
      path.appendChild(svg('title', {}, 'P' + e.thief + ' stole from P' + e.victim + ': ' + e.steals + ' steals, ' + e.gs + ' Gs'));
      g.appendChild(path);
    }
    for (const p of ps) {
      const grp = svg('g', { class: 'node', 'data-p': p });
      grp.appendChild(svg('circle', { cx: pos[p][0], cy: pos[p][1], r: nodeR }));
      grp.appendChild(svg('text', { x: pos[p][0], y: pos[p][1] + 4, 'text-anchor': 'middle' }, 'P' + p));
      grp.appendChild(svg('title', {}, 'P' + p));
      g.appendChild(grp);
    }
    const t = $('steal-matrix');
    t.textContent = '';
    const hr = el('tr');
    hr.appendChild(el('th', { class: 'l' }, 'thief \\ victim'));
    for (const p of ps) hr.appendChild(el('th', {}, 'P' + p));
    t.appendChild(hr);
    const cell = {};
    for (const e of st.edges) cell[e.thief + ':' + e.victim] = e;
    for (const a of ps) {
      const tr = el('tr');
      tr.appendChild(el('th', { class: 'l' }, 'P' + a));
      for (const b of ps) {
        const e = cell[a + ':' + b];
        const td = el('td', e ? { title: 'P' + a + ' stole from P' + b + ': ' + e.steals + ' steals, ' + e.gs + ' Gs' } : {}, e ? String(e.steals) : '');
        if (e) td.style.background = 'rgba(47,111,223,' + (0.1 + 0.6 * e.steals / max).toFixed(2) + ')';
        tr.appendChild(td);
      }
      t.appendChild(tr);
    }
    const tot = st.total && st.total[0] ? st.total[0] : { steals: 0, gs: 0 };
    $('steal-total').textContent = tot.steals + ' steals took ' + tot.gs + ' Gs in all.';
  }

  /* ---------- utilisation ---------- */

  function drawUtil(u) {
    const box = $('util');
    box.textContent = '';
    const parts = [
      ['running Gs', '#2f9e44'], ['scheduling', '#b2f2bb'], ['spinning', STATE_COLORS.spinning],
      ['syscall', STATE_COLORS.syscall], ['idle', STATE_COLORS.idle],
    ];
    /* The report's per-P figures (ns and % of the run), as `wsr report` prints them. */
    for (const r of u.procs) {
      const ns = [r.running_ns, r.sched_ns, r.spinning_ns, r.syscall_ns, r.idle_ns];
      const pct = [r.running_pct, r.sched_pct, r.spinning_pct, r.syscall_pct, r.idle_pct];
      const row = el('div', { class: 'util-row', 'data-p': r.p });
      row.appendChild(el('span', { class: 'name' }, 'P' + r.p));
      const bar = el('div', { class: 'util-bar' });
      ns.forEach((v, i) => {
        const d = el('div', { title: parts[i][0] + ': ' + fmtNs(v) + ' (' + pct[i].toFixed(1) + '%)' });
        d.style.width = pct[i] + '%';
        d.style.background = parts[i][1];
        bar.appendChild(d);
      });
      row.appendChild(bar);
      row.appendChild(el('span', { class: 'pct' }, r.running_pct.toFixed(1) + '% running Gs, ' +
        r.spinning_pct.toFixed(1) + '% spinning, ' + r.idle_pct.toFixed(1) + '% idle' + (u.lossy ? ' *' : '')));
      box.appendChild(row);
    }
    const lg = el('div', { class: 'note' });
    for (const [name, c] of parts) {
      const sw = el('span', { class: 'sw' });
      sw.style.background = c;
      lg.appendChild(sw);
      lg.appendChild(document.createTextNode(name + '  '));
    }
    box.appendChild(lg);
  }

  /* ---------- latency histogram ---------- */

  function drawLatency(l) {
    const g = $('latency');
    g.textContent = '';
    $('latency-summary').textContent = l.count === 0 ? 'No G became runnable and then ran.' :
      l.count + ' waits: mean ' + fmtNs(l.mean_ns) + ', p50 ' + fmtNs(l.p50_ns) + ', p90 ' + fmtNs(l.p90_ns) +
      ', p99 ' + fmtNs(l.p99_ns) + ', max ' + fmtNs(l.max_ns);
    if (l.count === 0) return;
    const Wd = 760, H = 240, left = 50, bottom = 40, top = 10;
    const bw = (Wd - left - 130) / l.buckets.length;
    let max = 1;
    for (const b of l.buckets) max = Math.max(max, b.n);
    g.appendChild(svg('line', { x1: left, y1: H - bottom, x2: Wd - 130, y2: H - bottom, stroke: '#999' }));
    g.appendChild(svg('text', { x: 4, y: top + 8 }, String(max)));
    g.appendChild(svg('text', { x: 4, y: H - bottom }, '0'));
    l.buckets.forEach((b, i) => {
      let y = H - bottom;
      const x = left + i * bw;
      b.by_source.forEach((c, s) => {
        if (!c) return;
        const h = c / max * (H - bottom - top);
        const r = svg('rect', { class: 'bar', x: x + 1, y: y - h, width: Math.max(1, bw - 2), height: h, fill: SOURCE_COLORS[s] });
        r.appendChild(svg('title', {}, fmtNs(b.lo) + '–' + fmtNs(b.hi) + ', ' + l.sources[s] + ': ' + c));
        g.appendChild(r);
        y -= h;
      });
      if (i % Math.ceil(l.buckets.length / 10) === 0) {
        g.appendChild(svg('text', { x: x, y: H - bottom + 14 }, fmtNs(b.lo)));
      }
    });
    g.appendChild(svg('text', { x: left, y: H - 8 }, 'latency (log2 buckets), bars stacked by where the G was taken from'));
    l.sources.forEach((s, i) => {
      g.appendChild(svg('rect', { x: Wd - 120, y: top + i * 16, width: 10, height: 10, fill: SOURCE_COLORS[i] }));
      g.appendChild(svg('text', { x: Wd - 105, y: top + i * 16 + 9 }, s));
    });
  }

  /* ---------- schedtrace ---------- */

  function drawSchedtrace(s) {
    const t = $('schedtrace');
    t.textContent = '';
    const cols = ['t_ms', 'gomaxprocs', 'idleprocs', 'threads', 'spinningthreads', 'idlethreads', 'runqueue', 'runnable_gs', 'runq', 'schedticks'];
    const arr = (c) => c === 'runq' || c === 'schedticks';
    const hr = el('tr');
    for (const c of cols) hr.appendChild(el('th', { class: arr(c) ? 'l' : '' }, c));
    t.appendChild(hr);
    for (const r of s.rows) {
      const tr = el('tr', { title: r.line });
      for (const c of cols) tr.appendChild(el('td', { class: arr(c) ? 'l' : '' }, arr(c) ? '[ ' + r[c].join(' ') + ' ]' : String(r[c])));
      t.appendChild(tr);
    }
    $('sched-note').textContent = s.rows.length + ' rows every ' + fmtNs(s.interval_ns) +
      (s.rows.length >= s.max_rows ? ' (first ' + s.max_rows + ' only: choose a longer interval)' : '');
  }

  async function loadSchedtrace() {
    const ms = parseFloat($('sched-interval').value);
    if (!(ms > 0)) return;
    try {
      drawSchedtrace(await api('schedtrace', { interval: ms + 'ms' }));
    } catch (err) {
      $('sched-note').textContent = 'error: ' + err.message;
    }
  }

  /* ---------- SQL console ---------- */

  async function runSql() {
    const out = $('sql-out');
    out.textContent = 'running…';
    try {
      const r = await api('sql', { q: $('sql-q').value });
      out.textContent = '';
      if (r.error && !r.columns) {
        out.appendChild(el('p', { class: 'error', id: 'sql-error' }, 'refused: ' + r.error));
        return;
      }
      const t = el('table', { id: 'sql-table' });
      const hr = el('tr');
      for (const c of r.columns) hr.appendChild(el('th', {}, c));
      t.appendChild(hr);
      for (const row of r.rows) {
        const tr = el('tr');
        for (const v of row) tr.appendChild(el('td', {}, v === null ? 'NULL' : String(v)));
        t.appendChild(tr);
      }
      out.appendChild(t);
      const note = r.rows.length + ' rows in ' + r.ms + ' ms' + (r.truncated ? ' (stopped at ' + r.max_rows + ' rows)' : '');
      out.appendChild(el('p', { class: 'note' }, note));
      if (r.error) out.appendChild(el('p', { class: 'error', id: 'sql-error' }, r.error));
    } catch (err) {
      out.textContent = '';
      out.appendChild(el('p', { class: 'error', id: 'sql-error' }, err.message));
    }
  }

  /* ---------- start ---------- */

  function showMeta() {
    const m = info.meta || {};
    $('title-path').textContent = info.path || '';
    const meta = $('meta');
    meta.textContent = '';
    const add = (k, v) => {
      meta.appendChild(document.createTextNode(k + ' '));
      meta.appendChild(el('b', {}, String(v)));
      meta.appendChild(document.createTextNode('   '));
    };
    if (m.procname) add('program', m.procname);
    add('gomaxprocs', info.gomaxprocs);
    add('duration', fmtNs(info.duration_ns));
    if (m.events !== undefined) add('events', m.events);
    if (m.g_count !== undefined) add('Gs', m.g_count);
    add('Ms', info.ms.length);
    if (m.observed_ms !== undefined) {
      /* Work and span (docs/workspan.md): T_P beside its bounds. */
      add('T_P', m.observed_ms.toFixed(3) + ' ms');
      add('lower / greedy bound', m.lower_bound_ms.toFixed(3) + ' / ' + m.greedy_bound_ms.toFixed(3) + ' ms');
      add('span', m.span_ms.toFixed(3) + ' ms (parallelism ' + m.parallelism.toFixed(2) +
        (STATIC ? ')' : '; critical path outlined)'));
    }
    const lost = (m.discarded_events || 0) + (m.discarded_packets || 0);
    if (lost > 0) {
      const b = $('banner');
      b.hidden = false;
      b.className = 'error';
      b.textContent = 'This trace lost events (' + (m.discarded_events || 0) + ' events, ' +
        (m.discarded_packets || 0) + ' packets discarded): figures near the losses are approximate.';
    } else if (STATIC) {
      const b = $('banner');
      b.hidden = false;
      b.textContent = 'Static report (' + STATIC.generator + '): the whole trace at ' + STATIC.px +
        ' pixels; zooming magnifies this downsampled picture. Run `wsr view` on the database for full detail.';
    }
  }

  async function main() {
    if (STATIC) document.body.classList.add('static');
    try {
      await waitIndexed();
      info = await api('info');
    } catch (err) {
      setStatus('error: ' + err.message);
      return;
    }
    showMeta();
    loadCritical();
    W.t0 = 0;
    W.t1 = info.duration_ns;
    resize();
    drawLegend();
    installTimelineEvents();
    if (STATIC) {
      timeline = STATIC.timeline;
      counters = STATIC.counters;
      draw();
      W.firstPaintMs = performance.now();
    } else {
      await fetchWindow();
      if (!countersReady) waitCounters().then(loadingStatus);
    }
    loadingStatus(); /* clears "loading…" once nothing is pending (always, in a report) */
    const iv = info.meta && info.meta.schedtrace_interval_ns;
    if (iv > 0) $('sched-interval').value = String(iv / 1e6);
    if (STATIC) {
      $('sched-interval').value = String(STATIC.schedtrace.interval_ns / 1e6);
      $('sched-interval').disabled = true;
      $('sched-run').disabled = true;
    }
    $('sched-run').addEventListener('click', loadSchedtrace);
    $('sql-run').addEventListener('click', runSql);
    $('sql-q').addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) runSql(); });
    try {
      /* /api/util, /api/steals and /api/latency carry the report's figures, loaded after the lanes. */
      const util = whenLoaded('metrics').then(() => api('util'));
      const [st, ut, la] = await Promise.all([util.then(() => api('steals')), util, apiReady('latency')]);
      drawSteals(st);
      drawUtil(ut);
      drawLatency(la);
      if (STATIC) drawSchedtrace(STATIC.schedtrace); else await loadSchedtrace();
    } catch (err) {
      setStatus('error: ' + err.message);
    }
    if (lanesWait) await lanesWait; /* ready means the full timeline is drawn */
    W.ready = true;
    document.body.dataset.ready = '1';
  }

  main();
})();
