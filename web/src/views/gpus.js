// The GPU panel (GET /v1/jobs/{job}/gpus, docs/telemetry.md): per rank, what NVML saw of its GPU
// over the window — clocks against their maxima, the share of the window each throttle reason
// held, power against its limit, temperature, memory, errors, link state — and "busy is not
// efficient": NVML's utilisation beside the share of time kernels ran and the share of kernel time
// on tensor cores. The straggler's row, and each figure its verdict cites as hardware evidence
// (GET /stragglers: hardware.items), are marked by colour and by a ⚠ and words. ?rank=R is the
// rank view: that rank's GPU in full, its row marked.
import { jobPath } from '../api.js';
import { fill, h } from '../dom.js';
import { pct, time } from '../format.js';
import { chart } from '../charts.js';
import { href } from '../route.js';
import { celsius, dash, int, mhz, mib, ofMax, share, watts } from '../units.js';

const REASONS = { power_cap: 'power cap', hw_slowdown: 'HW slowdown', sw_thermal: 'SW thermal',
    hw_thermal: 'HW thermal', power_brake: 'power brake', sync_boost: 'sync boost' };
// verdict evidence kind (query/gpu_evidence.c) -> the column that shows it
const EVIDENCE_COLUMN = { sm_clock: 'clocks', throttle: 'throttle', power: 'power', temperature: 'temp',
    ecc: 'errors', xid: 'errors', remap: 'errors', pcie: 'links', nvlink: 'links' };

function throttleText(g) {
    const t = g.throttle_share || {};
    const on = Object.entries(t).filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]);
    const parts = on.map(([k, v]) => `${REASONS[k] || k} ${share(v)}`);
    const vs = g.violation_share || {};
    if (vs.power > 0) parts.push(`power-limited ${share(vs.power)} of the time`);
    if (vs.thermal > 0) parts.push(`thermal-limited ${share(vs.thermal)} of the time`);
    if (Object.values(t).every((v) => v === null)) return '–';
    return parts.length ? parts.join(', ') : 'none';
}

function errorsText(g) {
    const e = g.errors || {};
    const parts = [];
    if (e.ecc_uncorrected) parts.push(`${int(e.ecc_uncorrected)} uncorrected ECC`);
    if (e.ecc_corrected) parts.push(`${int(e.ecc_corrected)} corrected ECC`);
    if (e.xids) parts.push(`${int(e.xids)} XID${e.last_xid !== null ? ` (last ${e.last_xid})` : ''}`);
    if (e.remapped_uncorrectable) parts.push(`${int(e.remapped_uncorrectable)} rows remapped`);
    if (e.remap_pending) parts.push('remap pending');
    if (e.remap_failed) parts.push('remap FAILED');
    return parts.length ? parts.join(', ') : 'none';
}

function linksText(g) {
    const l = g.links || {};
    const pcie = l.pcie_width !== null && l.pcie_width !== undefined
        ? `PCIe gen ${l.pcie_gen ?? '?'}/${l.pcie_gen_max ?? '?'} x${l.pcie_width}/x${l.pcie_width_max ?? '?'}` : 'PCIe –';
    const down = (l.pcie_width_max && l.pcie_width < l.pcie_width_max) || (l.pcie_gen_max && l.pcie_gen < l.pcie_gen_max);
    const parts = [down ? `${pcie} (below max)` : pcie];
    if (l.pcie_replays) parts.push(`${int(l.pcie_replays)} replays`);
    if (l.nvlink_up !== null && l.nvlink_up !== undefined) parts.push(`NVLink ${l.nvlink_up} up`);
    if (l.nvlink_errors) parts.push(`${int(l.nvlink_errors)} NVLink errors`);
    return parts.join(', ');
}

// The cells of one rank's row: [column key, text].
function cells(g) {
    const c = g.clocks || {};
    const sm = ofMax(c.sm_mhz, c.sm_max_mhz);
    const p = g.power || {};
    const m = g.memory || {};
    const k = g.kernels || {};
    const u = g.utilization || {};
    return [
        ['clocks', `${mhz(c.sm_mhz)} of ${mhz(c.sm_max_mhz)} (${sm.text})`],
        ['throttle', throttleText(g)],
        ['power', `${watts(p.watts)} of ${watts(p.limit_watts)}`],
        ['temp', `${celsius(g.temperature?.mean_c)} (max ${celsius(g.temperature?.max_c)})`],
        ['memory', `${mib(m.used_mib)} of ${mib(m.total_mib)}`],
        ['errors', errorsText(g)],
        ['links', linksText(g)],
        // memory-bound: the share of PC-sampling stall samples waiting on memory (null without samples)
        ['busy', `NVML ${dash(u.gpu_pct, pct)} · kernels ${share(k.busy_share)} · tensor cores ${share(k.tensor_core_share)}` +
            ` · memory-bound ${share(g.memory_bound?.share)}`],
    ];
}

const TITLES = { clocks: 'SM clock (of max)', throttle: 'throttled by', power: 'power (of limit)',
    temp: 'temperature', memory: 'memory used', errors: 'errors', links: 'links', busy: 'busy vs efficient' };

function gpuTable(job, d, stragglers, selected) {
    const rows = d.gpus.map((g) => {
        const s = stragglers.get(g.rank);
        const cited = new Set((s?.hardware?.items || []).map((i) => EVIDENCE_COLUMN[i.kind] || i.kind));
        const cls = [s ? 'straggler' : '', g.rank === selected ? 'selected' : ''].filter(Boolean).join(' ');
        return h('tr', { 'data-rank': g.rank, 'data-straggler': s ? '1' : null, class: cls || null },
            h('th', { scope: 'row' },
                h('a', { href: href({ view: 'gpus', job, params: { rank: g.rank } }), 'aria-label': `rank ${g.rank} GPU details` }, `rank ${g.rank}`),
                s ? h('span', { class: 'mark' }, ' ⚠ straggler') : null),
            h('td', null, h('span', { class: 'host' }, g.host || '?'), h('br'), h('span', { class: 'gpu' }, g.gpu_uuid || '?'),
                g.samples ? null : h('br'), g.samples ? null : h('em', null, 'no readings')),
            cells(g).map(([key, text]) => h('td', { 'data-col': key, class: cited.has(key) ? 'evidence' : null },
                cited.has(key) ? h('strong', null, '⚠ ') : null, text)));
    });
    return h('table', { id: 'gpu-table', class: 'gpus' },
        h('caption', null, 'Each rank\'s GPU over the window (⚠: cited as the straggler\'s hardware evidence)'),
        h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'rank'), h('th', { scope: 'col' }, 'host / GPU'),
            Object.values(TITLES).map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', null, rows));
}

function evidenceBox(job, verdict) {
    const list = (verdict?.stragglers || []).filter((s) => s.hardware);
    if (!list.length) {
        return h('div', { class: 'banner ok', id: 'gpu-evidence' }, verdict?.stragglers?.length
            ? 'The straggler\'s GPU shows nothing its peers do not (no hardware evidence).'
            : '✓ No straggler: no hardware evidence to show.');
    }
    return h('div', { class: 'banner bad', id: 'gpu-evidence', role: 'note' }, list.map((s) =>
        h('div', { 'data-rank': s.rank },
            h('strong', null, `⚠ Rank ${s.rank} `), '(', h('span', { class: 'host' }, s.host || '?'), ', ',
            h('span', { class: 'gpu' }, s.gpu_uuid || '?'), `): ${s.cause}. `,
            s.hardware.items?.length ? h('ul', null, s.hardware.items.map((i) => h('li', { 'data-kind': i.kind }, i.text)))
                : h('span', null, s.hardware.telemetry ? 'Its GPU looks like its peers\'. ' : 'No telemetry for its GPU. '),
            s.hardware.recommendation ? h('p', null, 'Recommended: ', s.hardware.recommendation) : null,
            h('a', { href: href({ view: 'gpus', job, params: { rank: s.rank } }) }, `rank ${s.rank}'s GPU`))));
}

function clocksOption(d, marked) {
    const ranks = d.gpus.map((g) => `${marked.has(g.rank) ? '⚠ ' : ''}${g.rank}`);
    const pctOf = (v, max) => (v !== null && max ? +((v / max) * 100).toFixed(1) : null);
    return {
        grid: { left: 60, right: 30, top: 40, bottom: 40 },
        legend: { top: 0 },
        tooltip: { trigger: 'axis', renderMode: 'richText' },
        xAxis: { type: 'category', name: 'rank', nameLocation: 'middle', nameGap: 25, data: ranks },
        yAxis: { type: 'value', name: '%', max: 100 },
        series: [
            { name: 'SM clock of max', type: 'bar', data: d.gpus.map((g) => pctOf(g.clocks?.sm_mhz, g.clocks?.sm_max_mhz)) },
            { name: 'power of limit', type: 'bar', data: d.gpus.map((g) => pctOf(g.power?.watts, g.power?.limit_watts)) },
            { name: 'NVML utilisation', type: 'line', symbol: 'circle', data: d.gpus.map((g) => g.utilization?.gpu_pct ?? null) },
            { name: 'kernels busy', type: 'line', symbol: 'triangle', lineStyle: { type: 'dashed' }, data: d.gpus.map((g) => (g.kernels?.busy_share ?? null) === null ? null : +(g.kernels.busy_share * 100).toFixed(1)) },
            { name: 'tensor cores', type: 'line', symbol: 'diamond', lineStyle: { type: 'dotted' }, data: d.gpus.map((g) => (g.kernels?.tensor_core_share ?? null) === null ? null : +(g.kernels.tensor_core_share * 100).toFixed(1)) },
        ],
    };
}

function rankDetail(g, s) {
    if (!g) return h('p', null, 'No such rank in this job.');
    return h('section', { id: 'gpu-rank', 'data-rank': g.rank, 'aria-label': `rank ${g.rank} GPU` },
        h('h2', null, `Rank ${g.rank}'s GPU`, s ? ' — ⚠ the straggler' : ''),
        h('dl', null,
            h('dt', null, 'host'), h('dd', { class: 'host' }, g.host || '?'),
            h('dt', null, 'GPU UUID'), h('dd', { class: 'gpu' }, g.gpu_uuid || '?'),
            h('dt', null, 'readings'), h('dd', null, `${g.samples} from ${time(g.first_ns)} to ${time(g.last_ns)}`),
            cells(g).map(([key, text]) => [h('dt', null, TITLES[key]), h('dd', { 'data-col': key }, text)]),
            g.kernels_why ? [h('dt', null, 'why no kernel figures'), h('dd', null, g.kernels_why)] : null,
            g.memory_bound?.why ? [h('dt', null, 'why no memory-bound share'), h('dd', null, g.memory_bound.why)] : null));
}

export function mountGpus(main, route, poller) {
    const { job } = route;
    const selected = route.params.rank !== undefined ? Number(route.params.rank) : null;
    const evidenceEl = h('div', null, h('div', { class: 'banner pending', id: 'gpu-evidence' }, 'Evaluating…'));
    const detailEl = h('div', null);
    const tableEl = h('div', { id: 'gpu-table-box' }, h('p', null, 'Loading…'));
    const chartEl = h('div', { id: 'gpu-chart', class: 'chart' });
    const meta = h('p', { class: 'meta', id: 'gpu-window' });
    fill(main, h('h1', null, 'GPUs: ', h('span', { class: 'job-name' }, job)), evidenceEl, detailEl, meta,
        h('h2', null, 'Per rank'), tableEl,
        h('h2', null, 'Clocks, power and busy vs efficient'),
        h('p', { class: 'meta' }, 'NVML\'s utilisation counts any kernel running, however little of the GPU it uses; kernels busy is the share of time a kernel ran, tensor cores the share of kernel time in tensor-core kernels (by name), memory-bound the share of PC-sampling stall samples waiting on memory (when sampled).'),
        chartEl);
    let gpus = null;
    let verdict = null;
    let c = null;
    const draw = () => {
        const stragglers = new Map((verdict?.stragglers || []).map((s) => [s.rank, s]));
        if (verdict) fill(evidenceEl, evidenceBox(job, verdict));
        if (!gpus) return;
        meta.textContent = `Window ${time(gpus.window?.since_ns)} – ${time(gpus.window?.until_ns)}; ${gpus.gpus.length} ranks, ${gpus.gpus.filter((g) => g.samples).length} with NVML readings.`;
        fill(tableEl, gpus.gpus.length ? gpuTable(job, gpus, stragglers, selected) : h('p', null, 'No ranks.'));
        fill(detailEl, selected !== null ? rankDetail(gpus.gpus.find((g) => g.rank === selected), stragglers.get(selected)) : null);
        const opt = clocksOption(gpus, new Set(stragglers.keys()));
        if (!c) c = chart(chartEl, opt);
        else c.setOption(opt, { notMerge: true });
    };
    poller.watch(jobPath(job, 'stragglers'), (d) => { verdict = d; draw(); },
        (e) => fill(evidenceEl, h('div', { class: 'banner pending', id: 'gpu-evidence' }, `No verdict: ${e.message}`)));
    poller.watch(jobPath(job, 'gpus'), (d) => { gpus = d; draw(); });
}
