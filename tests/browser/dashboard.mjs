// The dashboard in a real browser (Debian's chromium, headless, driven by puppeteer-core) against
// a real rankscope-server that tests/integration/260-dashboard.sh fed with the simulator:
//   node dashboard.mjs BASE_URL OUT_DIR
// Jobs it expects: "tour" (16 ranks, rank 5's GPU 10% slow from step 100), "pc" (PC sampling on),
// "live" (running while the test runs), "evil" (kernel and host names that are markup).
// Prints one line per check: "PASS what" or "FAIL what: why"; writes a screenshot of the view to
// OUT_DIR/<check>.png when a check fails (RS_SCREENSHOTS=DIR: of every view, for docs/).
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startHarness } from './harness.mjs';

const [base, out, authBase] = process.argv.slice(2); // authBase: a server with --token-file
const authToken = process.env.RS_TOKEN || '';
const { browser, newPage, check, open, text, until, sleep, assert, finish } = await startHarness(base, out);

// The colour of the heatmap cell of (rank row, column), read from the canvas ECharts drew.
async function cellColour(page, row, col) {
    return page.$eval('#heatmap', (el, row, col) => {
        const [l, t, r, b] = el.dataset.grid.split(',').map(Number);
        // ECharts may draw on more than one canvas (layers): the topmost pixel that is not clear
        let px = { r: 0, g: 0, b: 0, a: 0 };
        for (const canvas of el.querySelectorAll('canvas')) {
            const k = canvas.width / canvas.clientWidth;
            const w = (canvas.clientWidth - l - r) / Number(el.dataset.columns);
            const h = (canvas.clientHeight - t - b) / Number(el.dataset.ranks);
            const [R, G, B, A] = canvas.getContext('2d').getImageData(Math.round((l + (col + 0.5) * w) * k), Math.round((t + (row + 0.5) * h) * k), 1, 1).data;
            if (A > 0) px = { r: R, g: G, b: B, a: A };
        }
        return px;
    }, row, col);
}

// Where that cell is in the viewport (for a mouse click).
async function cellCentre(page, row, col) {
    return page.$eval('#heatmap', (el, row, col) => {
        const [l, t, r, b] = el.dataset.grid.split(',').map(Number);
        const rect = el.getBoundingClientRect();
        const w = (rect.width - l - r) / Number(el.dataset.columns);
        const h = (rect.height - t - b) / Number(el.dataset.ranks);
        return { x: rect.left + l + (col + 0.5) * w, y: rect.top + t + (row + 0.5) * h };
    }, row, col);
}

const page = await newPage();

await check('jobs list: every job, the straggler badge of tour names rank 5 and gpu_slow', page, async () => {
    await open(page, '#/jobs');
    await until(page, () => document.querySelector('#jobs-table .badge.bad[data-straggler-rank="5"]'));
    const t = await text(page, '#jobs-table');
    assert(/tour\s+16\b/.test(t), `no row "tour 16" in: ${t}`);
    assert(/rank 5: gpu_slow/.test(t), `badge text: ${t}`);
    await page.type('#job-search', 'pc');
    await until(page, () => !document.querySelector('#jobs-table').innerText.includes('tour'));
    // emptied, the search shows every job again (and the screenshot for docs/ the whole list)
    await page.click('#job-search', { clickCount: 3 });
    await page.keyboard.press('Backspace');
    await until(page, () => document.querySelector('#jobs-table').innerText.includes('tour'));
});

await check('live refresh: the overview of a running job picks up new steps in place', page, async () => {
    await open(page, '#/job/live/overview?metric=step_ms');
    await until(page, () => /steps 0–\d+/.test(document.querySelector('.meta')?.innerText || ''));
    await page.evaluate(() => { window.__sameDocument = true; });
    const last = async () => Number((await text(page, '.meta')).match(/steps 0–(\d+)/)[1]);
    const first = await last();
    await until(page, (n) => { const m = (document.querySelector('.meta')?.innerText || '').match(/steps 0–(\d+)/); return m && Number(m[1]) > n; }, first);
    assert(await page.evaluate(() => window.__sameDocument === true), 'the page was reloaded');
    assert((await last()) > first, 'no new steps');
    dropApiRefusals(page); // a verdict is "not enough data" (4xx) while the job is young
});

// The number a view shows at `sel` (the first match of `re`), and a wait until it grows in place.
async function grows(p, hash, sel, re) {
    await open(p, hash);
    const read = () => p.$eval(sel, (e, src) => { const m = e.innerText.match(new RegExp(src)); return m ? Number(m[1]) : null; }, re.source).catch(() => null);
    await until(p, (s, src) => new RegExp(src).test(document.querySelector(s)?.innerText || ''), sel, re.source);
    await p.evaluate(() => { window.__sameDocument = true; });
    const first = await read();
    await until(p, (s, src, n) => { const m = (document.querySelector(s)?.innerText || '').match(new RegExp(src)); return m && Number(m[1]) > n; }, sel, re.source, first);
    assert(await p.evaluate(() => window.__sameDocument === true), 'the page was reloaded');
    return { first, then: await read() };
}

await check('live refresh: the NCCL view of a running job counts new collectives in place', page, async () => {
    const r = await grows(page, '#/job/live/nccl', '#skew-summary', /^(\d+) collective instances/);
    assert(r.then > r.first, JSON.stringify(r));
    dropApiRefusals(page);
});

await check('live refresh: the kernels view of a running job counts new steps in place', page, async () => {
    const r = await grows(page, '#/job/live/kernels', '#top-scope', /^(\d+) rank-steps/);
    assert(r.then > r.first, JSON.stringify(r));
    dropApiRefusals(page);
});

await check('overview: the banner names rank 5, its host, GPU, cause gpu_slow, onset step 100', page, async () => {
    await open(page, '#/job/tour/overview');
    await until(page, () => document.querySelector('#verdict .verdict'));
    const v = await page.$eval('#verdict .verdict', (e) => ({ rank: e.dataset.rank, cause: e.dataset.cause, text: e.innerText }));
    assert(v.rank === '5' && v.cause === 'gpu_slow', JSON.stringify(v));
    assert(v.text.includes('sim-node-000') && v.text.includes('GPU-5a110001-0000-4000-8000-000000000005'), v.text);
    assert(/since: step 100\b/.test(v.text) && /action: drain-candidate/.test(v.text), v.text);
});

await check('overview: the heatmap marks rank 5, whose cells after step 100 are drawn vermillion, a peer\'s near white', page, async () => {
    await until(page, () => document.querySelector('#heatmap canvas') && document.querySelector('#heatmap').dataset.columns);
    const marks = await page.$$eval('#heatmap-marks [data-straggler-rank]', (e) => e.map((x) => x.dataset.straggler));
    assert((await page.$('#heatmap-marks [data-straggler-rank="5"]')) !== null, `marks: ${marks}`);
    const rows = await page.$eval('#heatmap', (e) => e.dataset.rows.split(','));
    assert(rows.indexOf('5*') === 5 && rows.filter((r) => r.endsWith('*')).length === 1, `rows: ${rows}`);
    await sleep(300);
    const cols = Number(await page.$eval('#heatmap', (e) => e.dataset.columns));
    const late = Math.floor(cols * 0.8);
    const slow = await cellColour(page, 5, late);
    const peer = await cellColour(page, 2, late);
    const before = await cellColour(page, 5, Math.floor(cols * 0.1)); // steps 0..99: not slow yet
    assert(slow.r > 180 && slow.r - slow.b > 100, `rank 5, late column: ${JSON.stringify(slow)}`);
    assert(Math.abs(peer.r - peer.b) < 60 && peer.g > 180, `rank 2, late column: ${JSON.stringify(peer)}`);
    assert(before.r - before.b < 60, `rank 5 before its onset: ${JSON.stringify(before)}`);
    // the test's own pixel reads make chromium suggest willReadFrequently: not the page's doing
    page.problems = page.problems.filter((x) => !/willReadFrequently/.test(x));
});

await check('overview: clicking a heatmap cell opens that rank and step', page, async () => {
    const cols = Number(await page.$eval('#heatmap', (e) => e.dataset.columns));
    await page.$eval('#heatmap', (e) => e.scrollIntoView());
    const v = await cellCentre(page, 5, Math.floor(cols / 2));
    await page.mouse.click(v.x, v.y);
    await until(page, () => document.querySelector('#rank-details')?.dataset.rank === '5');
    const hash = await page.evaluate(() => location.hash);
    assert(/rank=5/.test(hash) && /step=\d+/.test(hash), hash);
    const t = await text(page, '#rank-details');
    assert(t.includes('GPU-5a110001-0000-4000-8000-000000000005') && /step \d+/.test(t), t);
});

await check('overview: hovering a cell shows ECharts\' tooltip (in the canvas) with the cell\'s numbers', page, async () => {
    const cols = Number(await page.$eval('#heatmap', (e) => e.dataset.columns));
    const v = await cellCentre(page, 5, Math.floor(cols * 0.6)); // room on its right for the tooltip
    const scroll = await page.evaluate(() => [window.scrollX, window.scrollY]); // clip is in page coordinates
    const clip = { x: v.x + scroll[0] + 14, y: v.y + scroll[1] + 14, width: 120, height: 24 };
    await page.mouse.move(5, 5);
    await sleep(200);
    const before = await page.screenshot({ clip });
    await page.mouse.move(v.x, v.y);
    await until(page, () => /^rank 5, steps \d+–\d+: compute [0-9.]+ ms, column median [0-9.]+ ms \(\+[0-9.]+%\), slowest rank 5/.test(document.querySelector('#heatmap-hover').innerText));
    // (a running answer's redraw hides it for a frame: look a few times)
    let drawn = false;
    for (let i = 0; i < 10 && !drawn; i++) {
        await sleep(200);
        drawn = !before.equals(await page.screenshot({ clip }));
    }
    assert(drawn, 'nothing drawn beside the pointer');
});

await check('overview: the heatmap by keyboard — arrow keys move a focus cell (announced), Enter opens it', page, async () => {
    await open(page, '#/job/tour/overview?rank=5');
    await until(page, () => document.querySelector('#heatmap canvas') && document.querySelector('#heatmap').dataset.columns);
    await page.focus('#heatmap');
    await until(page, () => document.querySelector('#heatmap').dataset.focus?.startsWith('5,'));
    await page.keyboard.press('ArrowDown');
    await until(page, () => document.querySelector('#heatmap').dataset.focus?.startsWith('6,') &&
        document.querySelector('#heatmap-hover').innerText.startsWith('rank 6,'));
    assert(await page.$eval('#heatmap-hover', (e) => e.getAttribute('aria-live') === 'polite'), 'not announced');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('End');
    await page.keyboard.press('ArrowLeft');
    const f = await page.$eval('#heatmap', (e) => e.dataset.focus);
    const cols = Number(await page.$eval('#heatmap', (e) => e.dataset.columns));
    assert(f === `4,${cols - 2}`, `focus ${f}`);
    await page.keyboard.press('Enter');
    await until(page, () => document.querySelector('#rank-details')?.dataset.rank === '4');
    const hash = await page.evaluate(() => location.hash);
    assert(/rank=4/.test(hash) && /step=\d+/.test(hash), hash);
});

await check('overview: the verdict history — rank 5\'s onset step 100 and when the server raised it', page, async () => {
    await until(page, () => document.querySelector('#verdict-history-table'));
    const rows = await page.$$eval('#verdict-history-table tbody tr', (r) => r.map((x) => [...x.cells].map((c) => c.innerText)));
    const r5 = rows.find((r) => r[0] === 'rank 5');
    assert(r5 && r5[2] === 'step 100' && /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/.test(r5[3]) && r5[4] === 'active', JSON.stringify(rows));
    // tour ran at --speed 0: its 300 steps' GPU times span ~10 s that the simulator produced in
    // about one, so the server's raise (wall clock) lands before step 100 on the step axis — a
    // raise before its own onset is impossible, so it is not drawn there, and the page says why
    const raisedCol = await page.evaluate(() => {
        const c = document.querySelector('#steps-chart');
        return { lines: c.dataset.raisedLines, note: document.querySelector('#verdict-clock-note')?.innerText || '' };
    });
    const onsetNs = await page.evaluate(async () => {
        const hm = await (await fetch('/v1/jobs/tour/heatmap?metric=compute_ms&columns=300')).json();
        const v = await (await fetch('/v1/jobs/tour/stragglers')).json();
        const c100 = hm.columns.find((c) => c.first_step <= 100 && c.last_step >= 100);
        return { raised: v.stragglers[0].detected_ns, onset: c100.start_ns };
    });
    if (onsetNs.raised < onsetNs.onset) {
        assert(raisedCol.lines === '0', `a raise line drawn before the onset: ${JSON.stringify(raisedCol)}`);
        assert(/falls before the slowdown's onset/.test(raisedCol.note), `no note: ${JSON.stringify(raisedCol)}`);
    } else {
        assert(raisedCol.lines === '1' && !raisedCol.note, `the raise after the onset is not drawn: ${JSON.stringify(raisedCol)}`);
    }
});

await check('overview: the heatmap window — the whole job by default, each rank\'s newest 100 steps on request', page, async () => {
    await open(page, '#/job/tour/overview');
    await until(page, () => /^ steps 0–299; 1 step per column/.test(document.querySelector('.meta')?.innerText || '') ||
        /steps 0–299/.test(document.querySelector('.meta')?.innerText || ''));
    await page.select('#window', '100');
    await until(page, () => /each rank's newest 100 steps/.test(document.querySelector('.meta')?.innerText || ''));
    assert(/last=100/.test(await page.evaluate(() => location.hash)), 'not in the URL');
    assert(Number(await page.$eval('#heatmap', (e) => e.dataset.columns)) === 100, 'not 100 columns');
});

await check('a deep link restores its view: overview with metric, rank and step', page, async () => {
    const fresh = await newPage();
    await open(fresh, '#/job/tour/overview?metric=comm_ms&rank=5&step=150');
    await until(fresh, () => document.querySelector('#rank-details')?.dataset.rank === '5' && document.querySelector('#heatmap canvas'));
    const m = await fresh.$eval('#metric', (e) => e.value);
    const t = await text(fresh, '#rank-details');
    assert(m === 'comm_ms' && /Rank 5, step 150/.test(t), `${m} ${t}`);
    page.problems.push(...fresh.problems);
    await fresh.close();
});

await check('NCCL view: communicators and ranks; rank 5 arrives last most often', page, async () => {
    await open(page, '#/job/tour/nccl');
    await until(page, () => document.querySelector('#communicators table') && document.querySelector('#skew-ranks canvas'));
    const t = await text(page, '#skew-summary');
    assert(/rank 5 arrives last most often/.test(t), t);
    assert(/AllReduce/.test(await text(page, '#communicators')), 'no AllReduce row');
});

await check('NCCL view: durations of a second and more in seconds, as the rest of the dashboard ("28.7 s", not "28686.3 ms")', page, async () => {
    const skew = await page.evaluate(async () => (await fetch('/v1/jobs/tour/skew')).json());
    const rows = await page.$$eval('#communicators tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((td) => td.innerText)));
    const long = skew.communicators.filter((k) => k.wait_ms >= 1000);
    assert(long.length, `tour has no communicator that waited a second or more: ${JSON.stringify(skew.communicators)}`);
    for (const k of long) {
        const row = rows.find((r) => r[0] === k.comm && r[1] === k.op);
        assert(row && row[3] === `${(k.wait_ms / 1000).toFixed(1)} s`, `${k.comm} ${k.op} waited ${k.wait_ms} ms, shown ${row && row[3]}`);
    }
    const unscaled = rows.flat().filter((c) => /^\d{4,}(\.\d+)? ms$/.test(c));
    assert(!unscaled.length, `shown unscaled: ${unscaled.join(', ')}`);
});

await check('kernels view (deep link): rank 5 against its peers, the compare answer drawn', page, async () => {
    await open(page, '#/job/tour/kernels?rank=5');
    await until(page, () => document.querySelector('#top-table table') && document.querySelector('#compare-chart canvas') &&
        document.querySelector('#compare-summary').innerText.startsWith('B:'));
    assert(/Rank 5 against its peers/.test(await text(page, 'main')), 'no comparison title');
    assert(/cutlass/.test(await text(page, '#top-table')), 'no kernel names');
});

await check('kernels view: two windows of rank 5 side by side, before and after its onset', page, async () => {
    const cols = (await (await fetch(`${base}/v1/jobs/tour/heatmap?columns=300`)).json()).columns;
    const at = (step) => cols.find((c) => c.first_step === step).start_ns;
    // A: steps 20..89 (before the onset at 100), B: steps 150..219 — rank 5's GEMMs ~10% slower
    await open(page, `#/job/tour/kernels?rank=5&since_ns=${at(20)}&until_ns=${at(90)}&with_since_ns=${at(150)}&with_until_ns=${at(220)}`);
    await until(page, () => document.querySelector('#compare-chart canvas') && document.querySelector('#compare-summary').innerText.startsWith('B:'));
    const t = await text(page, '#compare-summary');
    const m = t.match(/^B: \+([0-9.]+) ms \(\+([0-9.]+)%\)/);
    assert(m && Number(m[2]) > 3, `B should be slower: ${t}`);
    assert(/Two windows of rank 5/.test(await text(page, 'main')), 'no two-window title');
});

await check('stall reasons: the icicle renders kernels, their PCs and reasons; the straggler against its peers drawn', page, async () => {
    await open(page, '#/job/pc/stalls');
    await until(page, () => document.querySelector('#icicle')?.dataset.nodes === 'drawn' && document.querySelector('#icicle canvas'));
    await sleep(300);
    const colours = await page.$eval('#icicle canvas', (canvas) => {
        const d = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        const seen = new Set();
        for (let i = 0; i < d.length; i += 4 * 97) seen.add(`${d[i] >> 4},${d[i + 1] >> 4},${d[i + 2] >> 4}`);
        return seen.size;
    });
    page.problems = page.problems.filter((x) => !/willReadFrequently/.test(x));
    assert(colours >= 6, `only ${colours} colours drawn in the icicle`);
    assert(/math_pipe_throttle/.test(await text(page, '#stall-reasons')), 'no reasons table');
    assert(/rank 2 \(straggler\)/.test(await text(page, '#stall-peers')), await text(page, '#stall-peers'));
    // the pc level (kernel -> pc -> reason) and the straggler's difference drawn
    const pcs = Number(await page.$eval('#icicle', (e) => e.dataset.pcs));
    assert(pcs > 0, 'no PCs in the icicle');
    await until(page, () => Number(document.querySelector('#stall-diff')?.dataset.reasons) > 0 && document.querySelector('#stall-diff canvas'));
});

await check('timeline: tracks of rank 5 and a peer, and the Perfetto download of the same window with both ranks', page, async () => {
    await open(page, '#/job/tour/timeline?rank=5');
    await until(page, () => Number(document.querySelector('#timeline')?.dataset.events) > 0 && document.querySelector('#timeline canvas'));
    const hash = await page.evaluate(() => location.hash);
    assert(/ranks=5%2C0|ranks=5,0/.test(hash) && /since_ns=\d+/.test(hash), hash);
    const dir = join(out, 'download');
    const cdp = await browser.target().createCDPSession();
    await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: dir, eventsEnabled: true });
    const done = new Promise((resolve) => cdp.on('Browser.downloadProgress', (e) => { if (e.state === 'completed') resolve(e); }));
    await page.click('#download-trace');
    await Promise.race([done, sleep(10000).then(() => { throw new Error('no download completed'); })]);
    const text = readFileSync(join(dir, 'rankscope-tour-ranks5-0.trace.json'), 'utf8');
    const doc = JSON.parse(text);
    rmSync(dir, { recursive: true, force: true });
    // every rank shown is in the file, each as its own process
    const pids = new Set(doc.traceEvents.filter((e) => e.ph === 'X').map((e) => e.pid));
    assert(doc.distributedInfo.ranks.join() === '5,0' && pids.has(5) && pids.has(0) && pids.size === 2, `ranks ${[...pids]}`);
    const shown = Number(await page.$eval('#timeline', (e) => e.dataset.events));
    assert(doc.traceEvents.length - 2 === shown, `${doc.traceEvents.length} events (2 track names), the page shows ${shown}`);
    // the file's window starts where the page's does (the URL's since_ns; JS numbers round it)
    const since = BigInt(new URLSearchParams(hash.split('?')[1]).get('since_ns'));
    const base = BigInt(text.match(/"baseTimeNanoseconds":(\d+)/)[1]);
    assert(base - since < 1000n && since - base < 1000n, `file starts at ${base}, the page at ${since}`);
});

// Chromium logs every 4xx answer as a console error; where a view asks for what does not exist
// yet (a verdict of a job with too few steps), that is the API's answer, not the page's error.
function dropApiRefusals(p) {
    p.problems = p.problems.filter((x) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(x));
}

await check('hostile names (markup in kernel and host names) are shown as text and run nothing', page, async () => {
    for (const hash of ['#/jobs', '#/job/evil/overview', '#/job/evil/kernels', '#/job/evil/timeline?ranks=0', '#/job/evilhost/overview?rank=0', '#/job/evilhost/kernels']) {
        await open(page, hash);
        await sleep(1500);
        const r = await page.evaluate(() => ({
            imgs: document.querySelectorAll('img, svg:not(.ec), script:not([src])').length,
            pwned: window.__pwned === true || document.title === 'pwned',
            text: document.body.innerText,
        }));
        assert(r.imgs === 0 && !r.pwned, `${hash}: injected elements ${r.imgs}, pwned ${r.pwned}`);
        if (hash.includes('evilhost/overview')) assert(r.text.includes('<img src=x onerror='), `${hash}: the host name is not shown as text`);
        if (hash.endsWith('evil/kernels')) assert(r.text.includes('<img src=x onerror='), `${hash}: the kernel name is not shown as text`);
    }
    dropApiRefusals(page);
});

await check('overview: its two requests leave with early.js, once; the heatmap is drawn while the verdict is still on its way (a placeholder banner), the banner then; the hang banner\'s request comes after theirs', page, async () => {
    const fresh = await newPage();
    await fresh.setRequestInterception(true);
    const order = [];
    const initiators = {};
    let releaseVerdict;
    const verdictHeld = new Promise((r) => { releaseVerdict = r; });
    fresh.on('request', async (r) => {
        const path = new URL(r.url()).pathname;
        // (the poller's later asks carry If-None-Match: only first asks count)
        if (path.startsWith('/v1/') && !r.headers()['if-none-match']) {
            order.push(path.replace(/^.*\//, ''));
            const stack = r.initiator()?.stack?.callFrames || [];
            initiators[path.replace(/^.*\//, '')] = stack.map((f) => f.url).join(' ');
        }
        if (path.endsWith('/stragglers')) await verdictHeld; // the slow answer
        r.continue();
    });
    await open(fresh, '#/job/tour/overview');
    await until(fresh, () => document.querySelector('#heatmap canvas') && document.querySelector('#heatmap').dataset.columns);
    assert(!(await fresh.$('#verdict')), 'a verdict banner before the verdict arrived');
    assert(/Evaluating/.test(await text(fresh, '#banner')), `the banner's placeholder: ${await text(fresh, '#banner')}`);
    assert(await fresh.$eval('#banner .skeleton', (e) => e.getAttribute('aria-busy') === 'true'), 'the placeholder is not marked busy');
    assert(!(await fresh.$eval('#heatmap', (e) => e.classList.contains('loading'))), 'the heatmap still shows its placeholder');
    // (it waits at most a second: it may have gone by now on a slow machine, but after these two)
    const heldUntil = order.indexOf('hangs');
    assert(heldUntil === -1 || heldUntil > Math.max(order.indexOf('stragglers'), order.indexOf('heatmap')), `the hang banner asked before the overview: ${order}`);
    // early.js sent both before app.js ran, and app.js used its answers instead of asking again
    assert(/\/assets\/early\.js/.test(initiators.heatmap || '') && /\/assets\/early\.js/.test(initiators.stragglers || ''),
        `not sent by early.js: ${JSON.stringify(initiators)}`);
    releaseVerdict();
    await until(fresh, () => document.querySelector('#verdict .verdict[data-rank="5"]'));
    assert(order.filter((p) => p === 'stragglers').length === 1 && order.filter((p) => p === 'heatmap').length === 1,
        `asked twice without an ETag: ${order}`);
    await until(fresh, () => performance.getEntriesByName('overview-first-render').length === 1);
    await sleep(300);
    assert(order.includes('hangs'), `the hang banner never asked: ${order}`);
    page.problems.push(...fresh.problems);
    await fresh.close();
});

await check('API token: a 401 brings the token prompt; the token then goes with every request', page, async () => {
    const fresh = await newPage();
    await fresh.setRequestInterception(true);
    const seen = [];
    fresh.on('request', (r) => {
        if (!r.url().includes('/v1/')) return r.continue();
        const auth = r.headers().authorization || '';
        seen.push(auth);
        if (auth !== 'Bearer s3cret') {
            return r.respond({ status: 401, contentType: 'application/json', body: '{"error":{"status":401,"message":"a bearer token is required"}}' });
        }
        return r.continue();
    });
    await open(fresh, '#/jobs');
    await until(fresh, () => document.querySelector('#token-input'));
    assert(/a bearer token is required/.test(await text(fresh, '.token-dialog')), 'the 401 message is not shown');
    await fresh.type('#token-input', 's3cret');
    await fresh.keyboard.press('Enter');
    await until(fresh, () => document.querySelector('#jobs-table table'));
    assert(seen.includes('Bearer s3cret'), `sent: ${seen}`);
    fresh.problems = fresh.problems.filter((p) => !/401/.test(p)); // the 401s were the point
    dropApiRefusals(fresh); // a job too young for a verdict: the list shows "no verdict"
    page.problems.push(...fresh.problems);
    await fresh.close();
});

if (authBase) {
    await check('with a token file: the page loads without a token, asks for one on the API\'s 401, then works', page, async () => {
        const fresh = await newPage();
        const sent = [];
        fresh.on('request', (r) => { if (r.url().includes('/v1/')) sent.push(r.headers().authorization || ''); });
        await fresh.goto(`${authBase}/?poll_ms=500#/jobs`, { waitUntil: 'load' });
        await until(fresh, () => document.querySelector('#token-input'));
        assert(/needs a token/.test(await text(fresh, '.token-dialog')), await text(fresh, '.token-dialog'));
        await fresh.type('#token-input', authToken);
        await fresh.keyboard.press('Enter');
        await until(fresh, () => document.querySelector('#jobs-table p, #jobs-table table'));
        assert(sent.includes(`Bearer ${authToken}`), 'the token was not sent');
        fresh.problems = fresh.problems.filter((x) => !/status of 401/.test(x)); // the 401 was the point
        page.problems.push(...fresh.problems);
        await fresh.close();
    });
}

await check('keyboard: Tab reaches the views and Enter on the rank list selects a rank', page, async () => {
    await open(page, '#/job/tour/overview');
    await until(page, () => document.querySelectorAll('#rank-select option').length > 1);
    await page.focus('#rank-select');
    await page.keyboard.press('ArrowDown'); // chromium's select changes on arrow keys when closed
    await until(page, () => document.querySelector('#rank-details')?.dataset.rank === '0');
    const tabbable = await page.evaluate(() => [...document.querySelectorAll('nav a')].every((a) => a.tabIndex === 0));
    assert(tabbable, 'nav links not reachable by Tab');
});

await finish();
