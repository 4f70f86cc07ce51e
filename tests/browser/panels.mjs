// The dashboard's panels (GPUs, fleet, advice, hangs) in a real browser against the server that
// tests/integration/264-panels.sh fed:
//   node panels.mjs BASE_URL OUT_DIR
// Jobs it expects: "capped" (4 ranks, rank 2's GPU held by its power cap: the straggler), "roomy"
// (launch-bound, GPU memory free: a batch_size finding), "hung" (rank 2 never arrives at an
// AllReduce for 25 s, running while this runs), "evilhost" (a host name that is markup).
// Every expectation is read from the API first (what the panel must show), never from the page.
import { startHarness } from './harness.mjs';

const [base, out] = process.argv.slice(2);
const { newPage, check, open, text, until, assert, finish } = await startHarness(base, out);
const api = async (path) => (await fetch(`${base}${path}`)).json();
const page = await newPage();

// first: the hang is open only for its 25 s
await check('hangs: the banner above the job names the op, seq and rank 2 that never arrived, with host and GPU', page, async () => {
    let d = null;
    for (let i = 0; i < 100 && !d?.hangs?.length; i++) {
        d = await api('/v1/jobs/hung/hangs');
        if (!d.hangs?.length) await new Promise((r) => setTimeout(r, 100));
    }
    assert(d.hangs?.length === 1, `the API reports no hang: ${JSON.stringify(d)}`);
    const [x] = d.hangs;
    await open(page, '#/job/hung/overview');
    await until(page, () => document.querySelector('#hang-banner .missing-rank'));
    const t = await text(page, '#hang-banner');
    assert(t.includes(`Hang: ${x.op} seq ${x.seq}`) && t.includes(x.comm), t);
    const m = x.never_arrived[0];
    assert(m.rank === 2 && t.includes(`rank 2 (host ${m.host}, GPU ${m.gpu_uuid})`), t);
    assert(t.includes(`${x.waiting.length} of ${x.comm_size} ranks waiting`), t);
    assert(await page.$eval('#hang-banner', (e) => e.getAttribute('role') === 'alert'), 'not an alert');
    // on the other views of the job too
    await open(page, '#/job/hung/gpus');
    await until(page, () => document.querySelector('#hang-banner .missing-rank[data-rank="2"]'));
});

await check('hangs view: the open hang in full (never arrived: rank 2; waiting 0, 1, 3), deep-linked', page, async () => {
    await open(page, '#/job/hung/hangs');
    await until(page, () => document.querySelector('#hangs-open table.never-arrived tbody tr'));
    const missing = await page.$$eval('#hangs-open table.never-arrived tbody tr', (r) => r.map((x) => x.cells[0].innerText));
    const waiting = await page.$$eval('#hangs-open table.waiting tbody tr', (r) => r.map((x) => x.cells[0].innerText));
    assert(missing.join() === '2' && waiting.join() === '0,1,3', `${missing} / ${waiting}`);
    await until(page, () => /⚠ open/.test(document.querySelector('#hangs-history')?.innerText || '')); // the watch's tick
    assert(await page.evaluate(() => document.querySelector('nav a[aria-current="page"]')?.innerText === 'Hangs'), 'nav');
});

await check('GPU panel: rank 2 marked the straggler; its clock and throttle cells marked as the evidence the verdict cites', page, async () => {
    const v = await api('/v1/jobs/capped/stragglers');
    const g = await api('/v1/jobs/capped/gpus');
    assert(v.stragglers?.[0]?.rank === 2, `the verdict: ${JSON.stringify(v.stragglers)}`);
    const cited = v.stragglers[0].hardware.items.map((i) => i.kind).sort();
    assert(cited.join() === 'sm_clock,throttle', `cited: ${cited}`);
    await open(page, '#/job/capped/gpus');
    await until(page, () => document.querySelectorAll('#gpu-table tbody tr').length === 4 && document.querySelector('#gpu-evidence li'));
    const rows = await page.$$eval('#gpu-table tbody tr', (r) => r.map((x) => ({
        rank: x.dataset.rank, straggler: x.dataset.straggler === '1', text: x.innerText,
        evidence: [...x.querySelectorAll('td.evidence')].map((c) => c.dataset.col).sort().join(),
    })));
    const r2 = rows.find((r) => r.rank === '2');
    assert(r2.straggler && r2.text.includes('⚠ straggler') && r2.evidence === 'clocks,throttle', JSON.stringify(r2));
    for (const r of rows.filter((x) => x.rank !== '2')) assert(!r.straggler && !r.evidence, JSON.stringify(r));
    const s2 = g.gpus.find((x) => x.rank === 2);
    const mhz = (x) => `${Math.round(x).toLocaleString('en-US')} MHz`;
    assert(r2.text.includes(`${mhz(s2.clocks.sm_mhz)} of ${mhz(s2.clocks.sm_max_mhz)}`), r2.text);
    assert(/power cap 100%/.test(r2.text), r2.text);
    const ev = await text(page, '#gpu-evidence');
    for (const i of v.stragglers[0].hardware.items) assert(ev.includes(i.text), `${i.text} not in ${ev}`);
    // busy vs efficient: NVML utilisation beside kernels' busy and tensor-core shares
    const pct = (x) => `${(x * 100).toFixed(0)}%`;
    assert(r2.text.includes(`kernels ${pct(s2.kernels.busy_share)}`) && r2.text.includes(`tensor cores ${pct(s2.kernels.tensor_core_share)}`), r2.text);
    assert(await page.$('#gpu-chart canvas'), 'no chart');
});

await check('GPU panel, rank view: ?rank=2 shows rank 2\'s GPU in full and marks its row; by keyboard from the table', page, async () => {
    await open(page, '#/job/capped/gpus');
    await until(page, () => document.querySelector('#gpu-table tbody tr[data-rank="1"] a'));
    await page.focus('#gpu-table tbody tr[data-rank="1"] a');
    await page.keyboard.press('Enter');
    await until(page, () => document.querySelector('#gpu-rank')?.dataset.rank === '1');
    assert(/rank=1/.test(await page.evaluate(() => location.hash)), 'no deep link');
    await open(page, '#/job/capped/gpus?rank=2');
    await until(page, () => document.querySelector('#gpu-rank')?.dataset.rank === '2');
    const t = await text(page, '#gpu-rank');
    assert(t.includes('the straggler') && t.includes('GPU-5a110001-0000-4000-8000-000000000002'), t);
    assert(await page.$('#gpu-table tr.selected[data-rank="2"]'), 'row not marked');
});

await check('fleet: GPUs ranked by straggling, capped\'s rank 2 GPU first; hosts; deep link ?show=hosts', page, async () => {
    const f = await api('/v1/gpus');
    await open(page, '#/fleet?show=hosts');
    await until(page, () => document.querySelector('#fleet-hosts tbody tr'));
    assert((await text(page, '#fleet-hosts')).includes('sim-node-000'), 'no host');
    await open(page, '#/fleet');
    await until(page, () => document.querySelector('#fleet-gpus tbody tr'));
    const first = await page.$eval('#fleet-gpus tbody tr', (r) => r.innerText);
    assert(first.includes(f.gpus[0].gpu_uuid) && f.gpus[0].gpu_uuid.endsWith('000000000002') && first.includes(f.gpus[0].summary), first);
    assert(await page.$('#fleet-gpus tbody tr:first-child .badge.bad'), 'the straggling GPU is not marked');
});

await check('advice panel: the API\'s findings in its order, the top one first with its cost and change', page, async () => {
    const a = await api('/v1/jobs/roomy/advice');
    await open(page, '#/job/roomy/advice');
    await until(page, () => document.querySelectorAll('#advice-findings li.finding').length > 0);
    const kinds = await page.$$eval('#advice-findings li.finding', (l) => l.map((x) => x.dataset.kind));
    assert(kinds.join() === a.findings.map((f) => f.kind).join(), `${kinds} vs ${a.findings.map((f) => f.kind)}`);
    const top = await text(page, '#advice-findings li.finding');
    const f0 = a.findings[0];
    assert(top.includes(f0.title) && top.includes(`costs up to ${f0.cost_ms.toFixed(f0.cost_ms < 10 ? 2 : 1)} ms per step`) && top.includes(f0.fix), top);
    const b = await text(page, '#finding-batch_size');
    assert(/memory used \(MiB\)\s+12,000/.test(b) && /memory total \(MiB\)\s+81,559/.test(b) && /batch factor\s+5/.test(b), b);
    assert(/memory_bound/.test(await text(page, '#advice-skipped')), 'skipped not shown');
    assert(await page.$('#advice-chart canvas'), 'no chart');
});

await check('advice panel, rank view: ?rank=1 asks the API for rank 1 and shows its findings only; the rank box changes it, by keyboard', page, async () => {
    await open(page, '#/job/roomy/advice?rank=1');
    await until(page, () => /^Rank 1: /.test(document.querySelector('#advice-summary')?.innerText || ''));
    const ranks = await page.$$eval('#advice-findings li.finding', (l) => l.map((x) => x.dataset.rank));
    assert(ranks.length && ranks.every((r) => r === '1'), `${ranks}`);
    await page.click('#advice-rank', { clickCount: 3 });
    await page.keyboard.type('3');
    await page.keyboard.press('Enter');
    await until(page, () => /^Rank 3: /.test(document.querySelector('#advice-summary')?.innerText || ''));
    assert(/rank=3/.test(await page.evaluate(() => location.hash)), 'not in the URL');
    await open(page, '#/job/capped/advice');
    await until(page, () => /memory near full/.test(document.querySelector('#advice-skipped')?.innerText || ''));
});

await check('markup in a host name is text: the GPU panel and the fleet show it literally and run nothing', page, async () => {
    await open(page, '#/job/evilhost/gpus');
    await until(page, () => document.querySelector('#gpu-table tbody tr'));
    assert((await text(page, '#gpu-table')).includes('<img src=x onerror='), 'the name is not shown as text');
    await open(page, '#/fleet?show=hosts');
    await until(page, () => document.querySelector('#fleet-hosts tbody tr'));
    assert((await text(page, '#fleet-hosts')).includes('<img src=x onerror='), 'the host is not shown as text');
    assert(!(await page.$('main img, #hang-alerts img')), 'an <img> was made from a name');
    assert(await page.evaluate(() => window.__pwned === undefined), 'the payload ran');
});

await check('live: the hang clears in place — the banner goes, the history keeps it with when it cleared', page, async () => {
    await open(page, '#/job/hung/hangs');
    await page.evaluate(() => { window.__sameDocument = true; });
    // the answer's open hangs are computed on request, its history by the watch's next tick
    await page.waitForFunction(() => !document.querySelector('#hang-banner') && /✓ No open hang/.test(document.querySelector('#hangs-open')?.innerText || '') &&
        !/⚠ open/.test(document.querySelector('#hangs-history')?.innerText || ''), { timeout: 40000, polling: 200 });
    const rows = await page.$$eval('#hangs-history tbody tr', (r) => r.map((x) => [...x.cells].map((c) => c.innerText)));
    assert(rows.length === 1 && /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/.test(rows[0][5]) && rows[0][6] === '3 of 4' && rows[0][7] === '2', JSON.stringify(rows));
    assert(await page.evaluate(() => window.__sameDocument === true), 'the page was reloaded');
});

await finish();
