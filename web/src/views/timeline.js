// The timeline of a short window: per-rank tracks (steps, compute kernels, NCCL, copies) from the
// trace export (GET /v1/jobs/{job}/trace, one rank per request), aligned on one time axis and
// zoomable; and the button that downloads the same window as a Perfetto/Chrome trace file.
import { apiDownload, apiGet, jobPath } from '../api.js';
import { fill, h } from '../dom.js';
import { chart, PALETTE } from '../charts.js';
import { go } from '../route.js';

const LANES = ['steps', 'compute', 'NCCL', 'copies'];
const DEFAULT_WINDOW_MS = 120;
const MAX_RANKS = 4;

function laneOf(e) {
    if (e.cat === 'user_annotation') return 0;
    if (e.cat === 'kernel') return /nccl/i.test(e.name) ? 2 : 1;
    return 3;
}

function option(tracks, since, windowMs) {
    const rows = [];
    const names = [];
    tracks.forEach((t) => LANES.forEach((l) => names.push(`rank ${t.rank} ${l}`)));
    const data = [];
    tracks.forEach((t, i) => {
        const base = (t.doc.baseTimeNanoseconds - since) / 1e6;
        for (const e of t.doc.traceEvents) {
            if (e.ph !== 'X') continue;
            const lane = laneOf(e);
            const x0 = base + e.ts / 1e3;
            data.push([i * LANES.length + lane, x0, x0 + (e.dur || 0) / 1e3, lane, rows.length]);
            rows.push(e.name);
        }
    });
    return {
        grid: { left: 130, right: 30, top: 10, bottom: 70 },
        dataZoom: [{ type: 'inside', filterMode: 'weakFilter' }, { type: 'slider', filterMode: 'weakFilter', bottom: 10 }],
        xAxis: { type: 'value', name: 'ms into the window', nameLocation: 'middle', nameGap: 25, min: 0, max: windowMs },
        yAxis: { type: 'category', data: names, inverse: true },
        tooltip: { renderMode: 'richText', formatter: (p) => `${rows[p.value[4]]}\n${(p.value[2] - p.value[1]).toFixed(3)} ms at ${p.value[1].toFixed(3)} ms` },
        series: [{
            type: 'custom',
            encode: { x: [1, 2], y: 0 },
            data,
            renderItem: (params, api) => {
                const a = api.coord([api.value(1), api.value(0)]);
                const b = api.coord([api.value(2), api.value(0)]);
                const hgt = api.size([0, 1])[1] * 0.7;
                return { type: 'rect', shape: { x: a[0], y: a[1] - hgt / 2, width: Math.max(b[0] - a[0], 1), height: hgt },
                    style: { fill: PALETTE[api.value(3)] } };
            },
        }],
    };
}

export function mountTimeline(main, route, poller) {
    const { job } = route;
    const p = route.params;
    const status = h('p', { id: 'timeline-status' }, 'Loading the window…');
    const el = h('div', { id: 'timeline', class: 'chart tall' });
    const button = h('button', { type: 'button', id: 'download-trace' }, 'Download this window (Perfetto trace)');
    fill(main, h('h1', null, 'Timeline: ', h('span', { class: 'job-name' }, job)), status, h('div', { class: 'controls' }, button), el);
    (async () => {
        const ranksDoc = (await apiGet(jobPath(job, 'ranks'))).data;
        let ranks = (p.ranks || '').split(',').filter((x) => x !== '').map(Number);
        if (!ranks.length) {
            const v = await apiGet(jobPath(job, 'stragglers')).catch(() => null);
            ranks = [p.rank !== undefined ? Number(p.rank) : null, ...(v?.data?.stragglers || []).map((s) => s.rank), ranksDoc.ranks[0]?.rank]
                .filter((r) => r !== null && r !== undefined);
        }
        ranks = [...new Set(ranks)].slice(0, MAX_RANKS);
        const windowMs = Number(p.window_ms) || DEFAULT_WINDOW_MS;
        const since = p.since_ns ? Number(p.since_ns) : ranksDoc.job.last_ns - windowMs * 1e6;
        const until = since + windowMs * 1e6;
        // the URL holds the exact window, so a link to this page shows the same one
        if (!p.since_ns || !p.ranks) {
            history.replaceState(null, '', `#/job/${encodeURIComponent(job)}/timeline?${new URLSearchParams({ ...p, ranks: ranks.join(','), since_ns: since, window_ms: windowMs })}`);
        }
        const range = { since_ns: String(BigInt(Math.round(since))), until_ns: String(BigInt(Math.round(until))) };
        const tracks = [];
        for (const rank of ranks) tracks.push({ rank, doc: (await apiGet(jobPath(job, 'trace', { rank, ...range }))).data });
        status.textContent = `ranks ${ranks.join(', ')}; ${windowMs} ms from ${new Date(since / 1e6).toISOString()} (scroll or drag the slider to zoom)`;
        el.dataset.events = tracks.reduce((n, t) => n + t.doc.traceEvents.length, 0);
        chart(el, option(tracks, since, windowMs));
        button.addEventListener('click', () => apiDownload(jobPath(job, 'trace', { rank: ranks[0], ...range }),
            `rankscope-${job}-rank${ranks[0]}.trace.json`).catch((e) => { status.textContent = `download failed: ${e.message}`; }));
    })().catch((e) => { status.textContent = `Cannot show the timeline: ${e.message}`; });
}
