// measure-viewer.mjs - figures for docs/viewer.md (a measurement, never a test).
//
// Serves DB with wsr-view, then in headless Chromium measures: the time from
// starting wsr-view to its URL and to the end of the background indexing; the
// first paint (navigation start to the first timeline drawn with data, read
// from window.__wsr.firstPaintMs), cold (page opened as soon as the URL is
// printed, in a browser already running: the server's sampled overview, then the full lanes,
// window.__wsr.fullPaintMs) and warm (server indexed); and the zoom time (a
// single wheel event to the redraw with the new window's data,
// window.__wsr.lastZoomMs) at several depths. Writes three screenshots: the
// cold first paint (SHOT-cold.png), the whole trace (SHOT-full.png) and the
// last zoom (SHOT).
// usage: node measure-viewer.mjs BUILD_DIR DB SCREENSHOT.png [--cold-only]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const [build, db, shot, mode] = process.argv.slice(2);
const coldOnly = mode === '--cold-only';
const { chromium } = createRequire(path.join(here, 'package.json'))('playwright-core');


// Polls fn in the page until it returns true. (page.waitForFunction builds its
// predicate with eval, which the viewer's Content-Security-Policy forbids.)
async function waitFor(page, fn, arg, timeoutMs = 60000) {
  const end = Date.now() + timeoutMs;
  while (!(await page.evaluate(fn, arg))) {
    if (Date.now() > end) throw new Error('timed out waiting for ' + fn);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// The browser is open before the server starts (as a user's would be), so
// the cold figure is the server's and the page's time, not Chromium's start.
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'wsr-measure-'));
const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium', headless: true, viewport: { width: 1600, height: 1000 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const page = await ctx.newPage();
await page.goto('about:blank');
const t0 = performance.now();
const server = spawn(path.join(build, 'viewer', 'wsr-view'), [db], { stdio: ['ignore', 'pipe', 'pipe'] });
let log = '';
server.stderr.on('data', (d) => { log += d; });
const url = await new Promise((resolve) => {
  let out = '';
  server.stdout.on('data', (d) => {
    out += d;
    const m = out.match(/http:\/\/127\.0\.0\.1:\d+\/#token=([0-9a-f]+)/);
    if (m) resolve(m[0]);
  });
});
const tUrl = performance.now() - t0;
// Cold: the page opened as soon as the URL is printed, while the server indexes.
await page.goto(url);
await waitFor(page, () => !!(window.__wsr && window.__wsr.firstPaintMs !== null), undefined, 300000);
const tCold = performance.now() - t0;
const coldPreview = await page.evaluate(() => window.__wsr.preview);
await page.screenshot({ path: shot.replace(/\.png$/, '-cold.png'), fullPage: true });
await waitFor(page, () => window.__wsr.fullPaintMs !== null, undefined, 300000);
const tColdFull = performance.now() - t0;
if (coldOnly) {
  await ctx.close();
  server.kill('SIGTERM');
  fs.rmSync(profile, { recursive: true, force: true });
  console.log(log.trim());
  console.log(`cold: wsr-view started -> first paint ${tCold.toFixed(0)} ms (${coldPreview ? 'overview' : 'full lanes'}), full lanes drawn ${tColdFull.toFixed(0)} ms`);
  process.exit(0);
}
for (;;) {
  const s = await (await fetch(url.replace(/#.*$/, '') + 'api/status',
    { headers: { 'X-WSR-Token': url.replace(/^.*#token=/, '') } })).json();
  if (s.lanes === 1 && s.counters === 1) break;
  await new Promise((r) => setTimeout(r, 50));
}
const tIndexed = performance.now() - t0;
const paints = [];
for (let i = 0; i < 3; i++) {
  await page.goto(url);
  await waitFor(page, () => !!(window.__wsr && window.__wsr.firstPaintMs !== null));
  paints.push(await page.evaluate(() => window.__wsr.firstPaintMs));
}
await page.waitForSelector('body[data-ready="1"]', { timeout: 120000 });
await page.screenshot({ path: shot.replace(/\.png$/, '-full.png'), fullPage: true });
const box = await page.$eval('#timeline', (c) => { const r = c.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width }; });
await page.mouse.move(box.x + 64 + (box.w - 64) * 0.37, box.y + 40);
const zooms = [];
for (let i = 0; i < 12; i++) {
  const seq = await page.$eval('#timeline', (c) => c.dataset.seq);
  await page.evaluate(() => { window.__wsr.lastZoomMs = null; });
  await page.mouse.wheel(0, -300);
  await waitFor(page, (s) => document.getElementById('timeline').dataset.seq !== s && window.__wsr.lastZoomMs !== null, seq);
  const r = await page.evaluate(() => [window.__wsr.lastZoomMs, window.__wsr.t1 - window.__wsr.t0]);
  zooms.push(r);
}
await page.screenshot({ path: shot, fullPage: true });
await ctx.close();
server.kill('SIGTERM');
fs.rmSync(profile, { recursive: true, force: true });
console.log(log.trim());
console.log(`wsr-view: URL after ${tUrl.toFixed(0)} ms, indexed after ${tIndexed.toFixed(0)} ms`);
console.log(`cold: wsr-view started -> first paint of a page opened at once: ${tCold.toFixed(0)} ms (${coldPreview ? 'overview' : 'full lanes'}), full lanes drawn ${tColdFull.toFixed(0)} ms`);
console.log(`first paint (navigation start -> timeline drawn): ${paints.map((p) => p.toFixed(0)).join(', ')} ms`);
for (const [ms, span] of zooms) console.log(`zoom to a ${(span / 1e6).toFixed(3)} ms window: ${ms.toFixed(0)} ms`);
console.log(`screenshot: ${shot}`);
