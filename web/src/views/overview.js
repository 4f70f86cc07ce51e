// The job overview: the verdict banner, the rank x step heatmap (server-binned, GET
// /v1/jobs/{job}/heatmap), step time over time (median, slowest rank, selected rank) with the
// verdict history on the same step axis, and the selected rank's details. Clicking a heatmap cell
// (or choosing a rank in the list, by keyboard) selects that rank and step in the URL.
import { jobPath } from '../api.js';
import { METRICS, metricOf, overviewPaths } from './overview_paths.js';
import { fill, h, table } from '../dom.js';
import { ms, pct, slower, time } from '../format.js';
import { chart, DIVERGING } from '../charts.js';
import { go, href } from '../route.js';

export { METRICS };
// The heatmap's grid, in pixels (data-grid tells tests where the cells are).
const GRID = { left: 70, right: 90, top: 10, bottom: 40 };
// The colour scale: each cell against its column's median, clamped at ±10%, so that a rank 3% off
// its peers is clearly tinted whatever the step time.
const SCALE_PCT = 10;

function banner(v, ranksInfo) {
    // a skeleton of the banner's size until the verdict is there: the heatmap is drawn as soon as
    // its own answer arrives, without waiting for this one
    if (!v) return h('div', { class: 'banner pending skeleton', 'aria-busy': 'true' }, 'Evaluating the ranks against their peers…');
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
let lut = null; // LUT_SIZE colours [r, g, b] from -SCALE_PCT to +SCALE_PCT along DIVERGING

function lutIndex(pctOff) {
    if (!lut) {
        const stops = DIVERGING.map((c) => [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16)));
        lut = Array.from({ length: LUT_SIZE }, (_, k) => {
            const x = (k / (LUT_SIZE - 1)) * (stops.length - 1);
            const i = Math.min(Math.floor(x), stops.length - 2);
            const f = x - i;
            return stops[i].map((v, j) => Math.round(v + (stops[i + 1][j] - v) * f));
        });
    }
    const t = Math.max(-1, Math.min(1, pctOff / SCALE_PCT)); // -1 .. 1
    return Math.round(((t + 1) / 2) * (LUT_SIZE - 1));
}

// One pixel per cell (ImageData: a few milliseconds for 1,024 x 200 cells, where a rectangle
// each took ~100 ms), then stretched onto a canvas of the grid's size without smoothing.
// The last painting, kept: a redraw for other reasons (the verdict's marks arriving after the
// cells, a focus move) reuses it instead of painting 100,000 cells again.
let painted = { hm: null, width: 0, height: 0, canvas: null };

function paintCells(hm, width, height) {
    if (painted.hm === hm && painted.width === width && painted.height === height) return painted.canvas;
    const cols = Math.max(1, hm.columns.length);
    const rows = Math.max(1, hm.ranks.length);
    const small = document.createElement('canvas');
    small.width = cols;
    small.height = rows;
    const img = small.getContext('2d').createImageData(cols, rows);
    const px = img.data;
    hm.values.forEach((row, y) => row.forEach((v, x) => {
        const med = hm.columns[x].median_ms;
        if (v === null || !med) return;
        const k = lutIndex((v / med - 1) * 100);
        const o = (y * cols + x) * 4;
        px[o] = lut[k][0];
        px[o + 1] = lut[k][1];
        px[o + 2] = lut[k][2];
        px[o + 3] = 255;
    }));
    small.getContext('2d').putImageData(img, 0, 0);
    const canvas = document.createElement('canvas');
    canvas.width = Math.max(1, Math.round(width));
    canvas.height = Math.max(1, Math.round(height));
    const g = canvas.getContext('2d');
    g.imageSmoothingEnabled = false;
    g.drawImage(small, 0, 0, canvas.width, canvas.height);
    painted = { hm, width, height, canvas };
    return canvas;
}

function heatmapOption(hm, marked, el, tip, focusCell) {
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
            style: { image: paintCells(hm, width, height), width, height } }, focusGraphic(hm, el, focusCell)],
        // ECharts' tooltip (drawn in the canvas, text only) for the cell under the pointer or the
        // keyboard's focus: one transparent item over the grid that the view shows it for
        tooltip: { trigger: 'item', triggerOn: 'none', renderMode: 'richText', confine: true, formatter: tip },
        series: [{ type: 'custom', data: [[0]], renderItem: () => ({ type: 'rect', shape: { x: GRID.left, y: GRID.top, width, height }, style: { fill: 'transparent' } }) }],
    };
}

// The focused cell's outline (keyboard), as a graphic over the cells.
function focusGraphic(hm, el, cell) {
    if (!cell) return { type: 'rect', id: 'focus', invisible: true, shape: { x: 0, y: 0, width: 0, height: 0 } };
    const w = (el.clientWidth - GRID.left - GRID.right) / hm.columns.length;
    const h = (el.clientHeight - GRID.top - GRID.bottom) / hm.ranks.length;
    return { type: 'rect', id: 'focus', invisible: false, silent: true, z: 100,
        shape: { x: GRID.left + cell.col * w - 1, y: GRID.top + cell.row * h - 1, width: Math.max(w, 3) + 2, height: Math.max(h, 3) + 2 },
        style: { fill: 'transparent', stroke: '#000', lineWidth: 2 } };
}

// The centre of a cell in the chart's coordinates (for the tooltip at a keyboard focus).
function cellCentre(hm, el, cell) {
    const w = (el.clientWidth - GRID.left - GRID.right) / hm.columns.length;
    const h = (el.clientHeight - GRID.top - GRID.bottom) / hm.ranks.length;
    return [GRID.left + (cell.col + 0.5) * w, GRID.top + (cell.row + 0.5) * h];
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
        (off !== null ? `, column median ${ms(c.median_ms)} (${off >= 0 ? '+' : ''}${off.toFixed(1)}%)` : '') +
        (c.max_rank !== null && c.max_rank !== undefined ? `, slowest rank ${c.max_rank} (${ms(c.max_ms)})` : '');
}

// The last column that began by time `ns` (-1: none): verdicts are raised and cleared on the
// server's clock, steps start on the GPUs' (both CLOCK_REALTIME: docs/analysis.md "Time").
function columnAt(hm, ns) {
    let k = -1;
    hm.columns.forEach((c, i) => { if (c.start_ns !== null && c.start_ns <= ns) k = i; });
    return k;
}

// Each verdict's onset (the step it began at), raise and clear (when the server's evaluation
// raised and cleared it) on the step axis, and the same as table rows.
function verdictHistory(hm, verdict) {
    const x = hm.columns.map((c) => String(c.first_step));
    const lines = [];
    const areas = [];
    const rows = [];
    let offClock = 0; // raises that fall before their onset on the step axis (not drawn)
    for (const s of verdict?.stragglers || []) {
        const since = s.onset?.step ?? s.since_step;
        const on = String(nearest(hm, since));
        lines.push({ xAxis: on, lineStyle: { type: 'dashed' }, label: { formatter: `rank ${s.rank} slow since step ${since}` } });
        const r = s.detected_ns ? columnAt(hm, s.detected_ns) : -1;
        // a verdict cannot be raised before its slowdown began: when the server's clock puts it
        // there, the job's step times are not wall-clock times (a simulated job run faster than
        // real time, an imported trace), and a line there would say the opposite of the truth
        if (r >= 0 && r < x.indexOf(on)) offClock++;
        else if (r >= 0) lines.push({ xAxis: x[r], lineStyle: { type: 'solid' }, label: { formatter: `rank ${s.rank} raised` } });
        areas.push([{ xAxis: on }, { xAxis: x[x.length - 1] }]);
        rows.push([`rank ${s.rank}`, s.kind || 'straggler', `step ${since}`, s.detected_ns ? time(s.detected_ns) : '–', 'active']);
    }
    for (const c of verdict?.cleared || []) {
        const a = columnAt(hm, c.detected_ns);
        const b = columnAt(hm, c.cleared_ns);
        if (a >= 0) lines.push({ xAxis: x[a], lineStyle: { type: 'solid' }, label: { formatter: `rank ${c.rank} raised` } });
        if (b >= 0) lines.push({ xAxis: x[b], lineStyle: { type: 'dotted' }, label: { formatter: `rank ${c.rank} cleared` } });
        if (a >= 0 && b >= 0) areas.push([{ xAxis: x[a] }, { xAxis: x[b] }]);
        rows.push([`rank ${c.rank}`, 'straggler', '–', time(c.detected_ns), time(c.cleared_ns)]);
    }
    return { lines, areas, rows, offClock };
}

function stepsOption(hm, selected, verdict) {
    const x = hm.columns.map((c) => c.first_step);
    const row = selected !== null ? hm.ranks.indexOf(selected) : -1;
    const { lines, areas } = verdictHistory(hm, verdict);
    const series = [
        { name: 'median rank', type: 'line', showSymbol: false, data: hm.columns.map((c) => c.median_ms),
            markLine: { symbol: 'none', data: lines, lineStyle: { color: '#D55E00' } },
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

// The heatmap's windows (overview_paths.js windowParams): the whole job, the newest steps, a range.
const WINDOWS = { all: 'whole job', 1000: 'newest 1,000 steps', 100: 'newest 100 steps' };

function windowText(hm) {
    if (hm.window === 'last') return `each rank's newest ${hm.last_steps} steps`;
    const older = hm.stored_rank_steps ? `; older steps from stored per-step summaries (${hm.stored_rank_steps} rank-steps)` : '';
    const missing = hm.rank_steps_without_metrics ? `; ${hm.rank_steps_without_metrics} older rank-steps not summarized yet, left out` : '';
    return `steps ${hm.first_step ?? '–'}–${hm.last_step ?? '–'}${older}${missing}`;
}

// Arrow keys move the focus cell, Page Up/Down by 10 ranks, Home/End to the row's ends: the new
// cell, or null for a key the heatmap does not use.
export function moveCell(cell, key, rows, cols) {
    const clamp = (v, n) => Math.max(0, Math.min(n - 1, v));
    const c = cell || { row: 0, col: 0 };
    const moves = {
        ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1],
        PageUp: [-10, 0], PageDown: [10, 0], Home: [0, -cols], End: [0, cols],
    };
    if (!moves[key]) return null;
    if (!cell) return c;
    return { row: clamp(c.row + moves[key][0], rows), col: clamp(c.col + moves[key][1], cols) };
}

export function mountOverview(main, route, poller) {
    const { job } = route;
    const metric = metricOf(route);
    const paths = overviewPaths(route); // (early.js may have sent these already)
    const selected = route.params.rank !== undefined ? Number(route.params.rank) : null;
    const step = route.params.step !== undefined ? Number(route.params.step) : null;
    const set = (p) => go({ view: 'overview', job, params: { ...route.params, ...p } });
    const select = h('select', { id: 'metric', 'aria-label': 'heatmap metric' },
        Object.entries(METRICS).map(([k, t]) => h('option', { value: k, selected: k === metric }, t)));
    select.addEventListener('change', () => set({ metric: select.value }));
    const win = route.params.last || (route.params.from_step || route.params.to_step ? 'range' : 'all');
    const winSelect = h('select', { id: 'window', 'aria-label': 'heatmap window' },
        Object.entries(WINDOWS).map(([k, t]) => h('option', { value: k, selected: k === win }, t)),
        win === 'range' ? h('option', { value: 'range', selected: true }, `steps ${route.params.from_step || 0}–${route.params.to_step || 'newest'}`) : null,
        WINDOWS[win] || win === 'range' ? null : h('option', { value: win, selected: true }, `newest ${win} steps`));
    winSelect.addEventListener('change', () => {
        if (winSelect.value === 'range') return;
        set({ last: winSelect.value === 'all' ? undefined : winSelect.value, from_step: undefined, to_step: undefined });
    });
    const bannerEl = h('div', { id: 'banner' }, banner(null));
    const heatEl = h('div', { id: 'heatmap', class: 'chart tall loading', 'aria-busy': 'true', tabindex: 0, role: 'group',
        'aria-label': 'rank by step heatmap: arrow keys move between cells, Enter opens that rank and step',
        'aria-describedby': 'heatmap-hover', 'data-grid': `${GRID.left},${GRID.top},${GRID.right},${GRID.bottom}` });
    const stepsEl = h('div', { id: 'steps-chart', class: 'chart' });
    const historyEl = h('div', { id: 'verdict-history' });
    const marksEl = h('p', { id: 'heatmap-marks' });
    const hoverEl = h('p', { id: 'heatmap-hover', 'aria-live': 'polite' }, 'Point at a cell for its numbers (or focus the heatmap and use the arrow keys); click it or press Enter to select that rank and step.');
    const detailsEl = h('div', null);
    const rankList = h('select', { id: 'rank-select', 'aria-label': 'select a rank' });
    rankList.addEventListener('change', () => set({ rank: rankList.value, step: undefined }));
    const meta = h('p', { class: 'meta' });
    fill(main, h('h1', null, `Job `, h('span', { class: 'job-name' }, job)), bannerEl,
        h('h2', null, 'Ranks × steps'),
        h('div', { class: 'controls' }, h('label', { for: 'metric' }, 'metric '), select,
            h('label', { for: 'window' }, ' window '), winSelect,
            h('label', { for: 'rank-select' }, ' rank '), rankList, meta),
        heatEl, h('div', { class: 'legend', 'aria-hidden': 'true' }, h('span', null, `−${SCALE_PCT}%`), h('span', { class: 'legend-bar' }), h('span', null, `+${SCALE_PCT}%`)),
        hoverEl, marksEl, h('h2', null, 'Step time and verdicts'), stepsEl, historyEl, detailsEl);

    let hm = null;
    let verdict = null;
    const info = new Map();
    let heat = null;
    let steps = null;
    let markedNow = new Set();
    const marked = () => markedNow;
    let drawnFor = null; // the heatmap answer and marks the heatmap shows
    let firstRender = false; // banner and heatmap both drawn once
    let rendered;
    const renderedOnce = new Promise((r) => { rendered = r; });
    let restPending = false; // drawRest is scheduled
    let listStale = false; // the rank list is not the heatmap's yet
    let hover = null; // the cell the tooltip is for
    let focusCell = null; // the keyboard's cell
    let tipAt = null; // where the tooltip is (chart coordinates)
    const showTip = (cell, at) => {
        hover = cell;
        tipAt = at;
        hoverEl.textContent = cellText(hm, cell);
        // after zrender has handled the pointer event that brought us here (ECharts hides a
        // tooltip shown while that event is being dispatched)
        requestAnimationFrame(() => {
            if (hover === cell && heat) heat.dispatchAction({ type: 'showTip', seriesIndex: 0, dataIndex: 0, position: [at[0] + 12, at[1] + 12] });
        });
    };
    const setFocus = (cell) => {
        focusCell = cell;
        heatEl.dataset.focus = cell ? `${cell.row},${cell.col}` : '';
        heat.setOption({ graphic: [focusGraphic(hm, heatEl, cell)] });
        if (cell) showTip(cell, cellCentre(hm, heatEl, cell));
    };
    const open = (cell) => set({ rank: hm.ranks[cell.row], step: hm.columns[cell.col].first_step });
    heatEl.addEventListener('keydown', (e) => {
        if (!hm || !heat || !hm.columns.length) return;
        if (e.key === 'Enter' && focusCell) {
            e.preventDefault();
            open(focusCell);
            return;
        }
        if (e.key === 'Escape') {
            hideTip();
            setFocus(null);
            return;
        }
        const next = moveCell(focusCell, e.key, hm.ranks.length, hm.columns.length);
        if (!next) return;
        e.preventDefault();
        setFocus(next);
    });
    heatEl.addEventListener('focus', () => {
        if (!hm || !heat || !hm.columns.length || focusCell) return;
        // start at the selected rank and step, else the first straggler's row, else the top left
        const row = Math.max(0, hm.ranks.indexOf(selected ?? [...marked()][0] ?? hm.ranks[0]));
        const col = step !== null ? Math.max(0, hm.columns.findIndex((c) => step >= c.first_step && step <= c.last_step)) : 0;
        setFocus({ row, col });
    });
    const hideTip = () => {
        hover = null;
        if (heat) heat.dispatchAction({ type: 'hideTip' });
    };
    heatEl.addEventListener('blur', hideTip);
    const draw = () => {
        const t0 = performance.now();
        markedNow = new Set((verdict?.stragglers || []).map((s) => s.rank));
        fill(bannerEl, banner(verdict, info));
        const key = hm ? `${hm.last_step}|${[...markedNow]}|${hm.columns.length}|${hm.steps_per_column}` : null;
        if (hm && key !== drawnFor) {
            drawnFor = key;
            heatEl.dataset.columns = hm.columns.length;
            heatEl.dataset.ranks = hm.ranks.length;
            heatEl.dataset.rows = hm.ranks.map((r) => (marked().has(r) ? `${r}*` : r)).join(',');
            if (focusCell && (focusCell.row >= hm.ranks.length || focusCell.col >= hm.columns.length)) focusCell = null;
            const tip = () => (hover && hm.values[hover.row] ? cellText(hm, hover) : '');
            if (!heat) {
                heat = chart(heatEl, heatmapOption(hm, marked(), heatEl, tip, focusCell), false);
                heat.getZr().on('mousemove', (e) => {
                    const cell = cellAt(hm, heatEl, e.offsetX, e.offsetY);
                    if (cell) showTip(cell, [e.offsetX, e.offsetY]);
                    else hideTip();
                });
                heat.getZr().on('globalout', hideTip);
                heat.getZr().on('click', (e) => {
                    const cell = cellAt(hm, heatEl, e.offsetX, e.offsetY);
                    if (cell) open(cell);
                });
            } else heat.setOption(heatmapOption(hm, marked(), heatEl, tip, focusCell), { replaceMerge: ['graphic'] });
            // a new answer redraws the chart, which hides its tooltip: show it again (live jobs)
            if (hover && hover.row < hm.ranks.length && hover.col < hm.columns.length) showTip(hover, tipAt);
            else hover = null;
            meta.textContent = ` ${windowText(hm)}; ${hm.steps_per_column} step${hm.steps_per_column === 1 ? '' : 's'} per column (steps: ${hm.steps_source})`;
            fill(marksEl, [...marked()].map((r) => h('span', { class: 'mark', 'data-straggler-rank': r }, `⚠ rank ${r} is marked: the straggler`)),
                ` Colour: each cell against its column's median (blue faster, vermillion slower, ±${SCALE_PCT}%).`);
            heatEl.classList.remove('loading');
            heatEl.removeAttribute('aria-busy');
            listStale = true;
        }
        if (hm && verdict && !firstRender) {
            // the first meaningful render: the banner and the heatmap are drawn (for
            // tests/bench/dashboard_overview.mjs); the rest follows after the browser has shown them
            firstRender = true;
            performance.mark('overview-first-render');
            rendered();
        }
        // User Timing for tests/bench/dashboard_overview.mjs: how long a redraw takes
        performance.measure(`overview-draw${hm ? '-heatmap' : ''}`, { start: t0 });
        if (!restPending) {
            restPending = true;
            requestAnimationFrame(() => setTimeout(drawRest, 0)); // after the next paint
        }
    };
    // The parts under the heatmap: the rank list, the step chart, the verdict history, the
    // selected rank — drawn after the banner and the heatmap have been painted.
    const drawRest = () => {
        restPending = false;
        if (!heatEl.isConnected) return; // the view was left meanwhile
        if (hm && listStale) {
            listStale = false;
            const opts = hm.ranks.map((r) => h('option', { value: r, selected: r === selected }, `${marked().has(r) ? '⚠ ' : ''}rank ${r}`));
            fill(rankList, h('option', { value: '' }, '—'), opts);
        }
        if (hm) {
            // the step chart and history follow the verdicts too (cheap: a point per column)
            if (!steps) steps = chart(stepsEl, stepsOption(hm, selected, verdict));
            else steps.setOption(stepsOption(hm, selected, verdict), { notMerge: true });
            const { rows, lines, offClock } = verdictHistory(hm, verdict);
            stepsEl.dataset.raisedLines = lines.filter((l) => l.lineStyle.type === 'solid').length;
            fill(historyEl, rows.length ? table('Verdict history: onset (GPU time, as a step), raised and cleared (server time)',
                ['rank', 'kind', 'onset', 'raised', 'cleared'], rows, { id: 'verdict-history-table' }) : h('p', null, 'No verdict raised or cleared in this job.'),
            offClock ? h('p', { id: 'verdict-clock-note', class: 'meta' }, `The server raised ${offClock === 1 ? 'this verdict' : `${offClock} verdicts`} at a time that falls before the slowdown's onset on this job's steps: its step times are not the server's clock (a simulated job run faster than real time, or an imported trace), so the raise is listed here, not drawn on the chart.`) : null);
        }
        fill(detailsEl, rankDetails(job, selected, step, info, hm));
    };
    // host and GPU of the selected rank (the answer is ~400 bytes a rank: only when one is chosen)
    if (selected !== null) poller.watch(jobPath(job, 'ranks'), (d) => { for (const r of d.ranks) info.set(r.rank, r); draw(); });
    poller.watch(paths.stragglers, (d) => { verdict = d; draw(); }, (e) => {
        fill(bannerEl, h('div', { class: 'banner pending', id: 'verdict' }, `No verdict: ${e.message}`));
    });
    // redraw the heatmap only when what it shows changed (an answer also changes when steps it
    // had computed get stored: the same numbers from another source)
    let shown = null;
    poller.watch(paths.heatmap, (d) => {
        const now = hm ? JSON.stringify([d.ranks, d.columns, d.values]) : null; // (not for the first)
        if (!hm || now !== shown) drawnFor = null;
        shown = now;
        hm = d;
        draw();
    });
    return renderedOnce; // main.js holds the hang banner's request until then
}
