// The timeline of a short window: per-rank tracks (steps, compute kernels, NCCL, copies) from the
// trace export (GET /v1/jobs/{job}/trace, one rank per request), aligned on one time axis and
// zoomable; and the button that downloads the same window of every rank shown as one
// Perfetto/Chrome trace file.
import { apiGet, jobPath, saveBlob } from '../api.js';
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

// One Chrome trace of several ranks' documents of the same window: the server gives every rank of
// a job the same baseTimeNanoseconds (query/trace_export.c) and each rank's events its rank as
// pid, so their events go side by side; a process_name per rank names its track in Perfetto.
// `base` is the base as exact digits (JSON numbers in JS lose the nanoseconds).
export function mergedTrace(job, tracks, base) {
    const world = Math.max(0, ...tracks.map((t) => t.doc.distributedInfo?.world_size || 0));
    const events = tracks.flatMap((t) => [
        { name: 'process_name', ph: 'M', pid: t.rank, args: { name: `rank ${t.rank}` } },
        ...t.doc.traceEvents,
    ]);
    const doc = {
        schemaVersion: 1,
        traceName: `rankscope export of job ${job}, ranks ${tracks.map((t) => t.rank).join(', ')}`,
        distributedInfo: { backend: 'nccl', ranks: tracks.map((t) => t.rank), world_size: world },
        displayTimeUnit: 'ms',
        baseTimeNanoseconds: 0,
        traceEvents: events,
    };
    return JSON.stringify(doc).replace('"baseTimeNanoseconds":0', `"baseTimeNanoseconds":${base}`);
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
        // the documents shown are the file: every rank of the window, one base (the window's
        // start, unless the job began later: then the job's first record, as the server chose)
        const base = tracks.every((t) => Math.abs(Number(t.doc.baseTimeNanoseconds) - Number(range.since_ns)) < 1e3)
            ? range.since_ns : String(tracks[0]?.doc.baseTimeNanoseconds ?? range.since_ns);
        button.textContent = `Download this window of rank${ranks.length > 1 ? 's' : ''} ${ranks.join(', ')} (Perfetto trace)`;
        button.addEventListener('click', () => saveBlob(new Blob([mergedTrace(job, tracks, base)], { type: 'application/json' }),
            `rankscope-${job}-ranks${ranks.join('-')}.trace.json`));
    })().catch((e) => { status.textContent = `Cannot show the timeline: ${e.message}`; });
}
