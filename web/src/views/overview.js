// The job overview: the verdict banner, the rank x step heatmap (server-binned, GET
// /v1/jobs/{job}/heatmap), step time over time (median, slowest rank, selected rank) with the
// verdict history on the same step axis, and the selected rank's details. Clicking a heatmap cell
// (or choosing a rank in the list, by keyboard) selects that rank and step in the URL.
import { jobPath } from '../api.js';
import { fill, h } from '../dom.js';
import { ms, pct, slower, time } from '../format.js';
import { chart, DIVERGING } from '../charts.js';
import { go, href } from '../route.js';

export const METRICS = {
    step_ms: 'step time', compute_ms: 'compute', comm_ms: 'NCCL (all)',
    exposed_comm_ms: 'exposed NCCL', idle_ms: 'idle', host_gap_ms: 'host gap',
};
const COLUMNS = 200;
// The heatmap's grid, in pixels (data-grid tells tests where the cells are).
const GRID = { left: 70, right: 90, top: 10, bottom: 40 };
// The colour scale: each cell against its column's median, clamped at ±10%, so that a rank 3% off
// its peers is clearly tinted whatever the step time.
const SCALE_PCT = 10;

function banner(v, ranksInfo) {
    if (!v) return h('div', { class: 'banner pending' }, 'Evaluating…');
    if (!v.stragglers?.length) {
        const s = (v.ranks || []).map((r) => r.slowdown);
        const spread = s.length ? `${((Math.min(...s) - 1) * 100).toFixed(1)}% to +${((Math.max(...s) - 1) * 100).toFixed(1)}%` : 'no ranks';
        return h('div', { class: 'banner ok', id: 'verdict' },
            h('strong', null, '✓ No straggler'), ` — ranks' spread against their peers: ${spread} (threshold ${pct(v.threshold * 100)}). ${v.summary || ''}`);
    }
    return h('div', { class: 'banner bad', id: 'verdict', role: 'alert' }, v.stragglers.map((s) => {
        const info = ranksInfo.get(s.rank) || {};
        return h('div', { class: 'verdict', 'data-rank': s.rank, 'data-cause': s.cause },
            h('strong', null, `⚠ Straggler: rank ${s.rank}`), ' → ', h('span', { class: 'host' }, s.host || info.host || '?'),
            ' → ', h('span', { class: 'gpu' }, s.gpu_uuid || info.gpu_uuid || '?'),
            h('ul', null,
                h('li', null, 'cause: ', h('strong', { class: 'cause' }, s.cause)),
                h('li', null, `slowdown: ${slower(s.slowdown)} than its peers`),
                h('li', null, `since: step ${s.onset?.step ?? s.since_step} (${time(s.onset?.start_ns || s.since_ns)})`),
                h('li', null, `impact: ${pct(s.impact_pct)} of the job's time (${s.impact_s.toFixed(2)} s; peers waited ${s.peer_wait_s.toFixed(2)} s)`),
                h('li', null, `confidence: ${(s.confidence * 100).toFixed(0)}%`),
                h('li', null, 'action: ', h('strong', null, s.action)),
                s.evidence?.length ? h('li', null, 'evidence: ', h('span', { class: 'kernel-name' }, s.evidence[0].kernel || ''),
                    s.evidence[0].ratio_to_peers ? ` ×${s.evidence[0].ratio_to_peers.toFixed(3)} of peers` : '') : null),
            h('a', { href: href({ view: 'overview', job: v.job, params: { rank: s.rank } }) }, `select rank ${s.rank}`), ' · ',
            h('a', { href: href({ view: 'kernels', job: v.job, params: { rank: s.rank } }) }, 'its kernels against its peers'));
    }));
}

// The cells are painted into one image (a canvas of the grid's size, a rectangle per cell) that
// ECharts places in its grid, with its axes around it: a 1,024-rank heatmap has ~100,000 cells,
// too many to draw as chart elements in well under a second (docs/BENCHMARKS.md "Dashboard").
const LUT_SIZE = 256;
let lut = null; // LUT_SIZE colours from -SCALE_PCT to +SCALE_PCT along DIVERGING

export function colourOf(pctOff) {
    if (!lut) {
        const stops = DIVERGING.map((c) => [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16)));
        lut = Array.from({ length: LUT_SIZE }, (_, k) => {
            const x = (k / (LUT_SIZE - 1)) * (stops.length - 1);
            const i = Math.min(Math.floor(x), stops.length - 2);
            const f = x - i;
            return `rgb(${stops[i].map((v, j) => Math.round(v + (stops[i + 1][j] - v) * f)).join(',')})`;
        });
    }
    const t = Math.max(-1, Math.min(1, pctOff / SCALE_PCT)); // -1 .. 1
    return lut[Math.round(((t + 1) / 2) * (LUT_SIZE - 1))];
}

function paintCells(hm, width, height) {
    const canvas = document.createElement('canvas');
    canvas.width = Math.max(1, Math.round(width));
    canvas.height = Math.max(1, Math.round(height));
    const g = canvas.getContext('2d');
    const w = canvas.width / Math.max(1, hm.columns.length);
    const h = canvas.height / Math.max(1, hm.ranks.length);
    hm.values.forEach((row, y) => row.forEach((v, x) => {
        const med = hm.columns[x].median_ms;
        if (v === null || !med) return;
        g.fillStyle = colourOf((v / med - 1) * 100);
        g.fillRect(Math.floor(x * w), Math.floor(y * h), Math.ceil(w), Math.ceil(h));
    }));
    return canvas;
}

function heatmapOption(hm, marked, el) {
    const width = el.clientWidth - GRID.left - GRID.right;
    const height = el.clientHeight - GRID.top - GRID.bottom;
    const rankLabel = (i) => `${marked.has(hm.ranks[i]) ? '⚠ ' : ''}${hm.ranks[i]}`;
    return {
        grid: GRID,
        // a label every few ranks (ECharts measures every label to choose them itself: slow for
        // 1,024); the straggler's always, through the marks below and the rank list
        yAxis: { type: 'category', name: 'rank', inverse: true, data: hm.ranks.map((_, i) => rankLabel(i)),
            axisTick: { show: false }, axisLabel: { interval: (i, label) => hm.ranks.length <= 40 || label.startsWith('⚠') || i % Math.ceil(hm.ranks.length / 40) === 0 } },
        xAxis: { type: 'category', name: 'step', nameLocation: 'middle', nameGap: 25, data: hm.columns.map((c) => c.first_step),
            axisTick: { show: false }, axisLabel: { interval: (i) => hm.columns.length <= 20 || i % Math.ceil(hm.columns.length / 20) === 0 } },
        graphic: [{ type: 'image', id: 'cells', x: GRID.left, y: GRID.top, silent: true,
            style: { image: paintCells(hm, width, height), width, height } }],
        series: [],
    };
}

// The cell under a point of the chart (zrender's offsetX/Y), or null.
function cellAt(hm, el, x, y) {
    const w = (el.clientWidth - GRID.left - GRID.right) / hm.columns.length;
    const h = (el.clientHeight - GRID.top - GRID.bottom) / hm.ranks.length;
    const col = Math.floor((x - GRID.left) / w);
    const row = Math.floor((y - GRID.top) / h);
    if (col < 0 || row < 0 || col >= hm.columns.length || row >= hm.ranks.length) return null;
    return { col, row };
}

function cellText(hm, cell) {
    const c = hm.columns[cell.col];
    const v = hm.values[cell.row][cell.col];
    const off = v !== null && c.median_ms ? (v / c.median_ms - 1) * 100 : null;
    return `rank ${hm.ranks[cell.row]}, steps ${c.first_step}–${c.last_step}: ${METRICS[hm.metric]} ${ms(v)}` +
        (off !== null ? `, column median ${ms(c.median_ms)} (${off >= 0 ? '+' : ''}${off.toFixed(1)}%)` : '');
}

function stepsOption(hm, selected, verdict) {
    const x = hm.columns.map((c) => c.first_step);
    const row = selected !== null ? hm.ranks.indexOf(selected) : -1;
    const lines = [];
    const areas = [];
    for (const s of verdict?.stragglers || []) {
        const since = s.onset?.step ?? s.since_step;
        lines.push({ xAxis: String(nearest(hm, since)), name: `rank ${s.rank} slow`, label: { formatter: `rank ${s.rank} slow since ${since}` } });
        areas.push([{ xAxis: String(nearest(hm, since)) }, { xAxis: String(x[x.length - 1]) }]);
    }
    for (const c of verdict?.cleared || []) {
        const col = hm.columns.findIndex((k) => k.start_ns !== null && k.start_ns >= c.cleared_ns);
        if (col >= 0) lines.push({ xAxis: String(x[col]), label: { formatter: `rank ${c.rank} cleared` } });
    }
    const series = [
        { name: 'median rank', type: 'line', showSymbol: false, data: hm.columns.map((c) => c.median_ms),
            markLine: { symbol: 'none', data: lines, lineStyle: { type: 'dashed', color: '#D55E00' } },
            markArea: { data: areas, itemStyle: { color: 'rgba(213,94,0,0.08)' } } },
        { name: 'slowest rank', type: 'line', showSymbol: false, lineStyle: { type: 'dotted' }, data: hm.columns.map((c) => c.max_ms) },
    ];
    if (row >= 0) series.push({ name: `rank ${selected}`, type: 'line', showSymbol: true, symbol: 'triangle', data: hm.values[row] });
    return {
        grid: { left: 70, right: 30, top: 40, bottom: 40 },
        legend: { top: 0 },
        xAxis: { type: 'category', name: 'step', nameLocation: 'middle', nameGap: 25, data: x.map(String) },
        yAxis: { type: 'value', name: METRICS[hm.metric] + ' (ms)', scale: true },
        tooltip: { trigger: 'axis', renderMode: 'richText' },
        series,
    };
}

function nearest(hm, step) {
    const c = hm.columns.find((k) => step >= k.first_step && step <= k.last_step) || hm.columns[0];
    return c ? c.first_step : 0;
}

function rankDetails(job, rank, step, info, hm) {
    if (rank === null) return h('p', null, 'Select a rank: click a heatmap cell, or choose one in the list.');
    const i = info.get(rank) || {};
    const row = hm ? hm.ranks.indexOf(rank) : -1;
    const col = hm && step !== null ? hm.columns.findIndex((c) => step >= c.first_step && step <= c.last_step) : -1;
    const win = col >= 0 && hm.columns[col].start_ns ? { since_ns: hm.columns[col].start_ns } : {};
    return h('section', { id: 'rank-details', 'data-rank': rank, 'aria-label': `rank ${rank}` },
        h('h2', null, `Rank ${rank}`, step !== null ? `, step ${step}` : ''),
        h('dl', null,
            h('dt', null, 'host'), h('dd', null, i.host || '?'),
            h('dt', null, 'GPU'), h('dd', null, i.gpu_uuid || '?'),
            h('dt', null, 'median step time'), h('dd', null, ms(i.step_time_ms)),
            col >= 0 && row >= 0 ? [h('dt', null, `${METRICS[hm.metric]} at steps ${hm.columns[col].first_step}–${hm.columns[col].last_step}`),
                h('dd', null, `${ms(hm.values[row][col])} (column median ${ms(hm.columns[col].median_ms)})`)] : null),
        h('p', null,
            h('a', { href: href({ view: 'kernels', job, params: { rank } }) }, 'kernels against peers'), ' · ',
            h('a', { href: href({ view: 'stalls', job, params: { rank } }) }, 'stall reasons'), ' · ',
            h('a', { href: href({ view: 'timeline', job, params: { rank, ...win } }) }, 'timeline')));
}

export function mountOverview(main, route, poller) {
    const { job } = route;
    // compute by default: in data-parallel training every rank's step takes as long as the slowest's
    // (they wait for it in NCCL), so a slow GPU shows in compute time, not in step time
    const metric = METRICS[route.params.metric] ? route.params.metric : 'compute_ms';
    const selected = route.params.rank !== undefined ? Number(route.params.rank) : null;
    const step = route.params.step !== undefined ? Number(route.params.step) : null;
    const set = (p) => go({ view: 'overview', job, params: { ...route.params, ...p } });
    const select = h('select', { id: 'metric', 'aria-label': 'heatmap metric' },
        Object.entries(METRICS).map(([k, t]) => h('option', { value: k, selected: k === metric }, t)));
    select.addEventListener('change', () => set({ metric: select.value }));
    const bannerEl = h('div', { id: 'banner' }, banner(null));
    const heatEl = h('div', { id: 'heatmap', class: 'chart tall', 'data-grid': `${GRID.left},${GRID.top},${GRID.right},${GRID.bottom}` });
    const stepsEl = h('div', { id: 'steps-chart', class: 'chart' });
    const marksEl = h('p', { id: 'heatmap-marks' });
    const hoverEl = h('p', { id: 'heatmap-hover', 'aria-live': 'polite' }, 'Point at a cell for its numbers; click it to select that rank and step.');
    const detailsEl = h('div', null);
    const rankList = h('select', { id: 'rank-select', 'aria-label': 'select a rank' });
    rankList.addEventListener('change', () => set({ rank: rankList.value, step: undefined }));
    const meta = h('p', { class: 'meta' });
    fill(main, h('h1', null, `Job `, h('span', { class: 'job-name' }, job)), bannerEl,
        h('h2', null, 'Ranks × steps'),
        h('div', { class: 'controls' }, h('label', { for: 'metric' }, 'metric '), select,
            h('label', { for: 'rank-select' }, ' rank '), rankList, meta),
        heatEl, h('div', { class: 'legend', 'aria-hidden': 'true' }, h('span', null, `−${SCALE_PCT}%`), h('span', { class: 'legend-bar' }), h('span', null, `+${SCALE_PCT}%`)),
        hoverEl, marksEl, h('h2', null, 'Step time and verdicts'), stepsEl, detailsEl);

    let hm = null;
    let verdict = null;
    const info = new Map();
    let heat = null;
    let steps = null;
    let markedNow = new Set();
    const marked = () => markedNow;
    let drawnFor = null; // the heatmap answer and marks the heatmap shows
    const draw = () => {
        const t0 = performance.now();
        markedNow = new Set((verdict?.stragglers || []).map((s) => s.rank));
        fill(bannerEl, banner(verdict, info));
        const key = hm ? `${hm.last_step}|${[...markedNow]}|${hm.columns.length}` : null;
        if (hm && key !== drawnFor) {
            drawnFor = key;
            heatEl.dataset.columns = hm.columns.length;
            heatEl.dataset.ranks = hm.ranks.length;
            heatEl.classList.toggle('tall', true);
            heatEl.dataset.rows = hm.ranks.map((r) => (marked().has(r) ? `${r}*` : r)).join(',');
            if (!heat) {
                heat = chart(heatEl, heatmapOption(hm, marked(), heatEl), false);
                heat.getZr().on('mousemove', (e) => {
                    const cell = cellAt(hm, heatEl, e.offsetX, e.offsetY);
                    if (cell) hoverEl.textContent = cellText(hm, cell);
                });
                heat.getZr().on('click', (e) => {
                    const cell = cellAt(hm, heatEl, e.offsetX, e.offsetY);
                    if (cell) set({ rank: hm.ranks[cell.row], step: hm.columns[cell.col].first_step });
                });
            } else heat.setOption(heatmapOption(hm, marked(), heatEl), { replaceMerge: ['graphic'] });
            if (!steps) steps = chart(stepsEl, stepsOption(hm, selected, verdict));
            else steps.setOption(stepsOption(hm, selected, verdict), { notMerge: true });
            meta.textContent = ` steps ${hm.first_step ?? '–'}–${hm.last_step ?? '–'}, ${hm.steps_per_column} per column (steps: ${hm.steps_source})`;
            fill(marksEl, [...marked()].map((r) => h('span', { class: 'mark', 'data-straggler-rank': r }, `⚠ rank ${r} is marked: the straggler`)),
                ` Colour: each cell against its column's median (blue faster, vermillion slower, ±${SCALE_PCT}%).` +
                ` Showing each rank's newest ${hm.last_steps} steps.`);
            const opts = hm.ranks.map((r) => h('option', { value: r, selected: r === selected }, `${marked().has(r) ? '⚠ ' : ''}rank ${r}`));
            fill(rankList, h('option', { value: '' }, '—'), opts);
        }
        fill(detailsEl, rankDetails(job, selected, step, info, hm));
        // User Timing for tests/bench/dashboard_overview.mjs: how long a redraw takes
        performance.measure(`overview-draw${hm ? '-heatmap' : ''}`, { start: t0 });
    };
    // host and GPU of the selected rank (the answer is ~400 bytes a rank: only when one is chosen)
    if (selected !== null) poller.watch(jobPath(job, 'ranks'), (d) => { for (const r of d.ranks) info.set(r.rank, r); draw(); });
    poller.watch(jobPath(job, 'stragglers'), (d) => { verdict = d; draw(); }, (e) => {
        fill(bannerEl, h('div', { class: 'banner pending', id: 'verdict' }, `No verdict: ${e.message}`));
    });
    poller.watch(jobPath(job, 'heatmap', { metric, columns: COLUMNS }), (d) => { hm = d; drawnFor = null; draw(); });
}
