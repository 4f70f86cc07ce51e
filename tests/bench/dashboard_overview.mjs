// Time to first meaningful render of the dashboard's job overview and the bytes it transfers, in
// Debian's chromium (headless): RUNS fresh browser contexts (empty cache) open
// BASE/#/job/JOB/overview; "rendered" is when the heatmap is drawn and the verdict banner is there
// (the page's User Timing mark overview-first-render, set once both are drawn), from navigation
// start. Prints one JSON line per run (with the machine's 1-minute load average as the run ended)
// and a summary: median, min, max, quartiles.
//   node tests/bench/dashboard_overview.mjs BASE JOB [RUNS]
// (puppeteer-core from tests/browser/node_modules: make browser-tools)
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../browser/package.json', import.meta.url));
const puppeteer = require('puppeteer-core');
const [base, job, runsArg] = process.argv.slice(2);
const runs = Number(runsArg || 3);
const browser = await puppeteer.launch({
    executablePath: process.env.RS_CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
});
const results = [];
for (let i = 0; i < runs; i++) {
    const ctx = await browser.createBrowserContext();
    const page = await ctx.newPage();
    await page.setViewport({ width: 1300, height: 1000 });
    const cdp = await page.createCDPSession();
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    const bytes = { total: 0, api: 0 };
    const urls = new Map();
    cdp.on('Network.responseReceived', (e) => urls.set(e.requestId, e.response.url));
    cdp.on('Network.loadingFinished', (e) => {
        bytes.total += e.encodedDataLength;
        if ((urls.get(e.requestId) || '').includes('/v1/')) bytes.api += e.encodedDataLength;
    });
    await page.goto(`${base}/#/job/${encodeURIComponent(job)}/overview`);
    await page.waitForFunction(() => document.querySelector('#heatmap canvas') &&
        document.querySelector('#heatmap').dataset.columns && document.querySelector('#verdict'), { timeout: 60000, polling: 'raf' });
    const ms = await page.evaluate(() => performance.getEntriesByName('overview-first-render')[0]?.startTime ?? performance.now());
    // where the time went: when the script and each API answer had arrived
    const timing = await page.evaluate(() => Object.fromEntries(performance.getEntriesByType('resource')
        .map((e) => [new URL(e.name).pathname.replace(/^.*\//, ''), Math.round(e.responseEnd)])
        .concat(performance.getEntriesByType('measure').map((m, i) => [`${m.name}#${i}`, `${Math.round(m.startTime)}+${Math.round(m.duration)}`]))
        // the main script starts running (the overview's requests would leave then without early.js)
        // and when early.js sent the verdict's request
        .concat(performance.getEntriesByName('app-start').map((m) => ['app-start', Math.round(m.startTime)]))
        .concat(performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/stragglers')).slice(0, 1).map((e) => ['stragglers-sent', Math.round(e.startTime)]))));
    const shape = await page.$eval('#heatmap', (e) => `${e.dataset.ranks} ranks x ${e.dataset.columns} columns`);
    await new Promise((r) => setTimeout(r, 300)); // the last loadingFinished events
    const load = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
    const r = { run: i + 1, first_render_ms: Math.round(ms), load_avg_1m: load, bytes_total: bytes.total, bytes_api: bytes.api, heatmap: shape, arrived_ms: timing };
    console.log(JSON.stringify(r));
    results.push(r);
    await ctx.close();
}
const sorted = results.map((r) => r.first_render_ms).sort((a, b) => a - b);
const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const loads = results.map((r) => r.load_avg_1m);
console.log(JSON.stringify({ runs, median_first_render_ms: sorted[sorted.length >> 1], min_first_render_ms: sorted[0],
    p25_first_render_ms: at(0.25), p75_first_render_ms: at(0.75), max_first_render_ms: sorted[sorted.length - 1],
    load_avg_1m: [Math.min(...loads), Math.max(...loads)], bytes_total: results[0].bytes_total, bytes_api: results[0].bytes_api }));
await browser.close();
