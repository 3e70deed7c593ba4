// test-viewer.mjs - `wsr view` and the HTML report in Debian's headless Chromium.
//
// Records a real trace of an example (wsr run --lossless), serves it with
// `wsr view`, and drives the page with playwright-core (no browser download:
// executablePath /usr/bin/chromium). Checks: no console errors; one P lane per
// P; steal-graph edges = rows of the steal_graph view; zooming narrows the
// visible range; clicking a G slice shows that G's id; the SQL console counts
// steals and refuses DELETE; a request with Host: evil.example is refused; the
// page works at localhost:PORT and says why without the per-run token; the
// cold-start overview (a server that never gets past it:
// WSR_VIEW_PREVIEW_ONLY=1) is drawn, flagged and bounded; the static HTML
// report opens from file:// with the network off and shows its charts.
// Screenshots go to BUILD/tests/browser/screenshots/.
// usage: node test-viewer.mjs   (env: WSR_BUILD_ROOT, WSR_SOURCE_ROOT, WSR_EXAMPLE)
// Exit status: 0 all passed, 1 a check failed, 77 skipped (no chromium).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const build = process.env.WSR_BUILD_ROOT;
const chromium = process.env.WSR_CHROMIUM || '/usr/bin/chromium';
const example = process.env.WSR_EXAMPLE || path.join(build, 'examples', 'skewed');
const exampleArgs = (process.env.WSR_EXAMPLE_ARGS || '20000 300').split(' ');
const outDir = path.join(build, 'tests', 'browser');
const shots = path.join(outDir, 'screenshots');
const wsr = path.join(build, 'analyzer', 'wsr');
const wsrView = path.join(build, 'viewer', 'wsr-view');

let failures = 0;
let n = 0;
function ok(cond, name, extra) {
  n++;
  if (cond) {
    console.log(`ok ${n} - ${name}`);
  } else {
    failures++;
    console.log(`not ok ${n} - ${name}${extra !== undefined ? ': ' + JSON.stringify(extra) : ''}`);
  }
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts });
  if (r.error) throw r.error;
  return r;
}

// playwright-core from tests/browser/node_modules, installed from the lock file when missing.
function loadPlaywright() {
  const req = createRequire(path.join(here, 'package.json'));
  try {
    return req('playwright-core');
  } catch {
    console.log('# installing playwright-core with npm (no browser download)');
    const r = run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts'], {
      cwd: here, env: { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' },
    });
    if (r.status !== 0) throw new Error('npm install failed: ' + r.stderr);
    return req('playwright-core');
  }
}

// Rows of a query over the database, through python3's sqlite3, read-only, with the
// wsr_sqlite extension (tests/lib/wsrdb.py: the column-block tables need its module).
function sql(db, q) {
  const r = run('python3', ['-c',
    'import json,sys\n' +
    'sys.path.insert(0,sys.argv[3])\n' +
    'import wsrdb\n' +
    'c=wsrdb.connect(sys.argv[1],ro=True)\n' +
    'print(json.dumps(c.execute(sys.argv[2]).fetchall()))', db, q,
    path.join(here, '..', 'lib')]);
  if (r.status !== 0) throw new Error('sqlite query failed: ' + r.stderr);
  return JSON.parse(r.stdout);
}

// Starts `wsr view DB` with extra environment; resolves to { server, url, err() }.
function startView(db, env) {
  const server = spawn(wsr, ['view', db], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let serverErr = '';
  server.stderr.on('data', (d) => { serverErr += d; });
  return new Promise((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error('no URL from wsr view: ' + serverErr)), 30000);
    server.stdout.on('data', (d) => {
      out += d;
      const m = out.match(URL_RE);
      if (m) { clearTimeout(t); resolve({ server, url: m[0], token: m[2], err: () => serverErr }); }
    });
    server.on('exit', (c) => reject(new Error('wsr view exited ' + c + ': ' + serverErr)));
  });
}

// The URL wsr view prints: http://127.0.0.1:PORT/#token=HEX (the API needs the token).
const URL_RE = /http:\/\/127\.0\.0\.1:(\d+)\/#token=([0-9a-f]+)/;

function rawGet(port, urlPath, host, token) {
  return new Promise((resolve, reject) => {
    const headers = { Host: host };
    if (token) headers['X-WSR-Token'] = token;
    const req = http.request({ host: '127.0.0.1', port, path: urlPath, headers }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

// Polls fn in the page until it returns true. (page.waitForFunction builds its
// predicate with eval, which the viewer's Content-Security-Policy forbids.)
async function waitFor(page, fn, arg, timeoutMs = 60000) {
  const end = Date.now() + timeoutMs;
  while (!(await page.evaluate(fn, arg))) {
    if (Date.now() > end) throw new Error('timed out waiting for ' + fn);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// The brief's flags; the fresh --user-data-dir is given as launchPersistentContext's
// first argument (playwright refuses it in args).
const LAUNCH_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

async function main() {
  if (!fs.existsSync(chromium)) {
    console.log(`1..0 # SKIP ${chromium} not found`);
    process.exit(77);
  }
  const { chromium: pw } = loadPlaywright();
  fs.mkdirSync(shots, { recursive: true });
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'wsr-browser-'));
  const traceDir = path.join(work, 'trace');

  // 1. A real trace of an example.
  const rec = run(wsr, ['run', '--out', traceDir, '--lossless', '--', example, ...exampleArgs]);
  let db = path.join(traceDir, 'trace.db');
  if (!fs.existsSync(db)) {
    console.log('# wsr run left no trace.db (exit ' + rec.status + '): ' + rec.stderr.trim());
    db = path.join(work, 'trace.db');
    const ing = run(wsr, ['ingest', traceDir, '-o', db]);
    if (ing.status !== 0) throw new Error('wsr ingest failed: ' + ing.stderr);
  }
  const gomaxprocs = sql(db, 'SELECT gomaxprocs FROM trace_info')[0][0];
  const edges = sql(db, 'SELECT thief, victim, steals FROM steal_graph ORDER BY thief, victim');
  const steals = sql(db, 'SELECT count(*) FROM steals')[0][0];
  console.log(`# trace: ${db}: gomaxprocs ${gomaxprocs}, ${steals} steals, ${edges.length} steal-graph edges`);

  // 2. wsr view (the front end execs wsr-view).
  const server = spawn(wsr, ['view', db], { stdio: ['ignore', 'pipe', 'pipe'] });
  let serverErr = '';
  server.stderr.on('data', (d) => { serverErr += d; });
  const [url, token] = await new Promise((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error('no URL from wsr view: ' + serverErr)), 30000);
    server.stdout.on('data', (d) => {
      out += d;
      const m = out.match(URL_RE);
      if (m) { clearTimeout(t); resolve([m[0], m[2]]); }
    });
    server.on('exit', (c) => reject(new Error('wsr view exited ' + c + ': ' + serverErr)));
  });
  const port = Number(new URL(url).port);
  console.log('# serving at ' + url);
  const browserProfile = fs.mkdtempSync(path.join(os.tmpdir(), 'wsr-chromium-'));
  let browser = null;
  try {
    // 3. Security: DNS rebinding and paths outside the assets.
    const evil = await rawGet(port, '/', 'evil.example');
    ok(evil.status === 421 || evil.status === 403, 'Host: evil.example is refused', evil.status);
    const evilApi = await rawGet(port, '/api/info', 'evil.example:' + port);
    ok(evilApi.status === 421 || evilApi.status === 403, 'Host: evil.example:PORT is refused on /api', evilApi.status);
    const trav = await rawGet(port, '/../../etc/passwd', '127.0.0.1:' + port);
    ok(trav.status === 404 && !trav.body.includes('root:'), 'no file outside the assets', trav.status);

    // Wait for the background indexing, so the page's first request finds it ready.
    for (let i = 0; i < 600; i++) {
      const s = JSON.parse((await rawGet(port, '/api/status', '127.0.0.1:' + port, token)).body);
      if (s.lanes === 1 && s.counters === 1) break;
      await new Promise((r) => setTimeout(r, 100));
    }

    browser = await pw.launchPersistentContext(browserProfile, {
      executablePath: chromium, headless: true, args: LAUNCH_ARGS, viewport: { width: 1400, height: 1000 },
    });
    const page = await browser.newPage();
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(url);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
    ok(errors.length === 0, 'the page loads with no console errors', errors);
    const firstPaint = await page.evaluate(() => window.__wsr.firstPaintMs);
    console.log(`# first paint ${firstPaint.toFixed(0)} ms after navigation start`);

    const pLanes = await page.$$eval('.lane-label[data-kind="p"]', (ls) => ls.length);
    ok(pLanes === gomaxprocs, 'one P lane per P', { pLanes, gomaxprocs });

    // Work and span (docs/workspan.md): the critical path outlined, all of it
    // in view at first; T_P and its bounds in the header.
    const crit = sql(db, 'SELECT count(*) FROM dag_strand WHERE critical = 1')[0][0];
    await waitFor(page, () => document.getElementById('timeline').dataset.criticalRows !== undefined);
    const outlined = await page.$eval('#timeline', (c) => [c.dataset.criticalRows, Number(c.dataset.critical)]);
    ok(crit > 0 && outlined[0] === String(crit) && outlined[1] === crit,
      'every critical strand is outlined on its P lane', { crit, outlined });
    const header = await page.$eval('#meta', (m) => m.textContent);
    // The stored double, rounded as the page and the C reports round it (exactly): not
    // SQLite's printf, whose %.3f rounds 19.3115 (19.31149999... in binary) up to 19.312.
    const tp = Number(sql(db, "SELECT value FROM meta WHERE key = 'observed_ms'")[0][0]).toFixed(3);
    ok(header.includes('T_P ' + tp + ' ms') && header.includes('lower / greedy bound'),
      'the header shows T_P beside its bounds', header);

    const drawn = await page.$$eval('#steal-graph path.edge', (ps) => ps.map((p) =>
      [Number(p.dataset.thief), Number(p.dataset.victim), Number(p.dataset.steals)]));
    drawn.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    ok(JSON.stringify(drawn) === JSON.stringify(edges), 'steal-graph edges equal the steal_graph rows', { drawn, edges });
    await page.screenshot({ path: path.join(shots, 'viewer.png'), fullPage: true });

    // Zoom with the wheel over the middle of the trace's longest G run, so
    // that the zoomed window holds a G slice whatever the recorded trace looks
    // like (the middle of the timeline may be an idle gap or tiny runs).
    const before = await page.$eval('#range', (r) => [Number(r.dataset.t0), Number(r.dataset.t1)]);
    const box = await page.$eval('#timeline', (c) => { const r = c.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width }; });
    const seq0 = await page.$eval('#timeline', (c) => c.dataset.seq);
    const [longest] = sql(db, "SELECT (g.start_ts + g.end_ts) / 2 - t.start_ts FROM g_state g, trace_info t " +
      "WHERE g.state = 'running' ORDER BY g.end_ts - g.start_ts DESC LIMIT 1");
    const mid = longest ? Number(longest[0]) : (before[0] + before[1]) / 2;
    const frac = Math.min(Math.max((mid - before[0]) / (before[1] - before[0]), 0), 1);
    await page.mouse.move(box.x + 64 + (box.w - 64) * frac, box.y + 40);
    for (let i = 0; i < 4; i++) await page.mouse.wheel(0, -300);
    await waitFor(page, (s) => document.getElementById('timeline').dataset.seq !== s, seq0);
    await waitFor(page, () => window.__wsr.lastZoomMs !== null);
    const after = await page.$eval('#range', (r) => [Number(r.dataset.t0), Number(r.dataset.t1)]);
    ok(after[1] - after[0] < (before[1] - before[0]) / 2 && (after[0] !== before[0] || after[1] !== before[1]),
      'zooming changes the visible range', { before, after });
    const zoomMs = await page.evaluate(() => window.__wsr.lastZoomMs);
    console.log(`# zoom drawn ${zoomMs.toFixed(0)} ms after the wheel`);

    // The wheel events may end after the first fetch: wait (bounded) until the
    // fetch for the final range has drawn single-G runs; until then the canvas
    // shows the previous, coarser window's data, merged runs only.
    await waitFor(page, () => window.__wsr.slices.some((b) => b.w >= 3), undefined, 10000)
      .catch(() => {});
    // Click the widest G slice on screen.
    const slice = await page.evaluate(() => {
      const s = window.__wsr.slices.filter((b) => b.w >= 3);
      s.sort((a, b) => b.w - a.w);
      return s[0] || null;
    });
    ok(slice !== null, 'the zoomed timeline shows G slices');
    if (slice) {
      await page.mouse.click(box.x + slice.x + Math.min(slice.w / 2, 20), box.y + slice.y + slice.h / 2);
      await page.waitForSelector('#details-g');
      const shown = await page.$eval('#details-g', (e) => e.textContent);
      ok(shown === 'G' + slice.g, 'clicking a slice shows that G\'s id', { shown, g: slice.g });
      await page.waitForSelector('#details table');
      const how = await page.$eval('#details table', (t) => t.textContent);
      ok(/how it got here/.test(how) && /why it stopped/.test(how), 'the details say how the G got there and why it stopped');
      await page.screenshot({ path: path.join(shots, 'viewer-zoomed-details.png'), fullPage: false });
    }

    // The SQL console.
    await page.fill('#sql-q', 'SELECT count(*) FROM steals');
    await page.click('#sql-run');
    await page.waitForSelector('#sql-table');
    const count = await page.$eval('#sql-table tr:nth-child(2) td', (td) => td.textContent);
    ok(count === String(steals), 'SQL console: SELECT count(*) FROM steals', { count, steals });
    await page.fill('#sql-q', 'DELETE FROM steals');
    await page.click('#sql-run');
    await page.waitForSelector('#sql-error');
    const refusal = await page.$eval('#sql-error', (e) => e.textContent);
    ok(/not authorized|read-only/.test(refusal), 'SQL console refuses DELETE FROM steals', refusal);
    ok(sql(db, 'SELECT count(*) FROM steals')[0][0] === steals, 'the database is unchanged');
    await page.$eval('#sql-section', (s) => s.scrollIntoView());
    await page.screenshot({ path: path.join(shots, 'viewer-sql.png') });
    ok(errors.length === 0, 'no console errors after the interactions', errors);
    await page.close();

    // The same page at localhost:PORT (with the token), and without the token.
    const lp = await browser.newPage();
    const lerrors = [];
    lp.on('console', (m) => { if (m.type() === 'error') lerrors.push(m.text()); });
    lp.on('pageerror', (e) => lerrors.push(String(e)));
    await lp.goto(url.replace('127.0.0.1', 'localhost'));
    await lp.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
    const lpLanes = await lp.$$eval('.lane-label[data-kind="p"]', (ls) => ls.length);
    ok(lerrors.length === 0 && lpLanes === gomaxprocs, 'the page works at localhost:PORT', { lerrors, lpLanes });
    await lp.goto(url.replace(/#.*$/, ''));
    await waitFor(lp, () => /token/.test(document.getElementById('status').textContent));
    const noTok = await lp.$eval('#status', (e) => e.textContent);
    ok(/403/.test(noTok), 'without the token the page says the API refused it', noTok);
    await lp.close();

    // The cold-start overview: a server that stops after it (the lanes never load).
    const pv = await startView(db, { WSR_VIEW_PREVIEW_ONLY: '1' });
    try {
      const pvPort = Number(new URL(pv.url).port);
      const get = async (p) => {
        const r = await rawGet(pvPort, p, '127.0.0.1:' + pvPort, pv.token);
        return { status: r.status, body: JSON.parse(r.body) };
      };
      let st = null;
      for (let i = 0; i < 600; i++) {
        st = (await get('/api/status')).body;
        if (st.preview !== 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      ok(st.preview === 1 && st.lanes === 0, 'overview server: the overview is built, the lanes are not', st);
      const tl = (await get('/api/timeline?px=800')).body;
      const items = tl.p.map((l) => l.runs.length + l.states.length).concat(tl.m.map((l) => l.states.length));
      ok(tl.preview === true && tl.p.length === gomaxprocs && Math.max(...items) <= 2 * 800 + 2,
        'overview timeline: flagged, one lane per P, at most ~2 items per pixel and lane', { preview: tl.preview, ps: tl.p.length, items });
      ok(tl.p.some((l) => l.runs.length > 0), 'overview timeline: shows G runs');
      const ut = await get('/api/util');
      ok(ut.status === 503 && ut.body.loading === true, 'overview server: /api/util waits for the figures', ut);
      const pp = await browser.newPage();
      const perrors = [];
      pp.on('console', (m) => { if (m.type() === 'error') perrors.push(m.text()); });
      pp.on('pageerror', (e) => perrors.push(String(e)));
      await pp.goto(pv.url);
      await waitFor(pp, () => !!(window.__wsr && window.__wsr.firstPaintMs !== null));
      const w = await pp.evaluate(() => ({ preview: window.__wsr.preview, full: window.__wsr.fullPaintMs }));
      const status = await pp.$eval('#status', (e) => e.textContent);
      const lanes = await pp.$$eval('.lane-label[data-kind="p"]', (ls) => ls.length);
      const inked = await pp.$eval('#timeline', (c) => {
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let k = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && (d[i] < 200 || d[i + 1] < 200)) k++;
        return k;
      });
      ok(w.preview === true && w.full === null && /overview/.test(status) && lanes === gomaxprocs && inked > 1000,
        'the page draws the overview and says so', { w, status, lanes, inked });
      await pp.screenshot({ path: path.join(shots, 'viewer-overview.png'), fullPage: true });
      ok(perrors.length === 0, 'the overview page has no console errors', perrors);
      await pp.close();
    } finally {
      pv.server.kill('SIGTERM');
      await new Promise((r) => (pv.server.exitCode !== null ? r() : pv.server.on('exit', r)));
    }
    ok(pv.server.exitCode === 0, 'the overview server exits 0 on SIGTERM', pv.server.exitCode);

    // 4. The static HTML report from file:// with the network off.
    const report = path.join(outDir, 'report.html');
    const rep = run(wsrView, ['--html', '-o', report, db]);
    ok(rep.status === 0 && fs.existsSync(report), 'wsr-view --html writes the report', rep.stderr);
    console.log(`# report.html: ${fs.statSync(report).size} bytes`);
    await browser.setOffline(true);
    const rp = await browser.newPage();
    const rerrors = [];
    const requests = [];
    rp.on('console', (m) => { if (m.type() === 'error') rerrors.push(m.text()); });
    rp.on('pageerror', (e) => rerrors.push(String(e)));
    rp.on('request', (r) => { if (!r.url().startsWith('file:')) requests.push(r.url()); });
    await rp.goto('file://' + report);
    await rp.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
    ok(rerrors.length === 0, 'the report opens with no console errors', rerrors);
    ok(requests.length === 0, 'the report makes no network request', requests);
    const rl = await rp.$$eval('.lane-label[data-kind="p"]', (ls) => ls.length);
    const re = await rp.$$eval('#steal-graph path.edge', (ps) => ps.length);
    const bars = await rp.$$eval('#latency rect.bar', (rs) => rs.length);
    const util = await rp.$$eval('.util-row', (rs) => rs.length);
    const inked = await rp.$eval('#timeline', (c) => {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let k = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && (d[i] < 200 || d[i + 1] < 200)) k++;
      return k;
    });
    ok(rl === gomaxprocs && re === edges.length && bars > 0 && util === gomaxprocs && inked > 1000,
      'the report shows its charts', { rl, re, bars, util, inked });
    await rp.screenshot({ path: path.join(shots, 'report.png'), fullPage: true });
    await rp.close();
  } finally {
    if (browser) await browser.close();
    server.kill('SIGTERM');
    await new Promise((r) => (server.exitCode !== null ? r() : server.on('exit', r)));
    fs.rmSync(browserProfile, { recursive: true, force: true });
    fs.rmSync(work, { recursive: true, force: true });
  }
  ok(server.exitCode === 0, 'wsr view exits 0 on SIGTERM', server.exitCode);
  console.log(`1..${n}`);
  console.log(`# screenshots in ${shots}`);
  process.exit(failures === 0 ? 0 : 1);
}

main().catch((e) => {
  console.log('not ok - ' + (e && e.stack ? e.stack : e));
  process.exit(1);
});
