// Stall reasons: an icicle (flame graph, top down) of PC-sampling stall samples, scope -> kernel
// -> pc -> reason, drawn with ECharts' custom series; and the straggler's (or the chosen rank's)
// difference from its peers, drawn as bars of each reason's share (GET /v1/jobs/{job}/stalls).
import { jobPath } from '../api.js';
import { fill, h, table } from '../dom.js';
import { pct } from '../format.js';
import { chart, PALETTE } from '../charts.js';

// Flattens the answer into rectangles {depth, x0, x1, name, samples}: x in [0, 1]; depth 1 the
// kernels, 2 their PCs with the most samples (the rest as "other PCs"), 3 each PC's reasons.
export function icicleNodes(d, scopeName) {
    const total = d.samples || 0;
    const nodes = [{ depth: 0, x0: 0, x1: 1, name: scopeName, samples: total }];
    if (!total) return nodes;
    const rest = (depth, x, x1, name, samples) => {
        if (x1 - x > 1e-9 && samples > 0) nodes.push({ depth, x0: x, x1, name, samples });
    };
    let x = 0;
    for (const k of d.kernels || []) {
        const w = k.samples / total;
        nodes.push({ depth: 1, x0: x, x1: x + w, name: k.name, samples: k.samples });
        let px = x;
        let left = k.samples;
        for (const pc of k.pcs || []) {
            const pw = pc.samples / total;
            nodes.push({ depth: 2, x0: px, x1: px + pw, name: `${pc.pc}`, samples: pc.samples, kernel: k.name });
            let rx = px;
            let rleft = pc.samples;
            for (const r of pc.reasons || []) {
                nodes.push({ depth: 3, x0: rx, x1: rx + r.samples / total, name: r.reason, samples: r.samples });
                rx += r.samples / total;
                rleft -= r.samples;
            }
            rest(3, rx, px + pw, 'other reasons', rleft);
            px += pw;
            left -= pc.samples;
        }
        rest(2, px, x + w, k.pcs ? 'other PCs' : 'PCs not read', left);
        x += w;
    }
    if (x < 0.999) nodes.push({ depth: 1, x0: x, x1: 1, name: 'other kernels', samples: Math.round((1 - x) * total) });
    return nodes;
}

const DEPTHS = 4;

// The rank against its peers: each reason's share of their stall samples, as two bars.
function diffOption(mix) {
    const rows = [...mix].sort((a, b) => Math.abs(b.change_pts) - Math.abs(a.change_pts)).slice(0, 12).reverse();
    return {
        grid: { left: 170, right: 40, top: 30, bottom: 30 },
        legend: { top: 0 },
        tooltip: { trigger: 'axis', renderMode: 'richText' },
        xAxis: { type: 'value', name: '% of stall samples' },
        yAxis: { type: 'category', data: rows.map((r) => r.reason) },
        series: [
            { name: 'peers (A)', type: 'bar', data: rows.map((r) => +r.a_pct.toFixed(2)) },
            { name: 'this rank (B)', type: 'bar', data: rows.map((r) => +r.b_pct.toFixed(2)) },
        ],
    };
}

function icicleOption(nodes) {
    return {
        grid: { left: 0, right: 0, top: 0, bottom: 0 },
        xAxis: { type: 'value', min: 0, max: 1, show: false },
        yAxis: { type: 'value', min: 0, max: DEPTHS, inverse: true, show: false },
        tooltip: { renderMode: 'richText', formatter: (p) => { const n = nodes[p.dataIndex]; return `${n.kernel ? `${n.kernel} at ` : ''}${n.name}\n${n.samples} samples (${pct((n.x1 - n.x0) * 100)})`; } },
        series: [{
            type: 'custom',
            data: nodes.map((n, i) => [n.x0, n.x1, n.depth, i]),
            encode: { x: [0, 1], y: 2 },
            renderItem: (params, api) => {
                const n = nodes[api.value(3)];
                const a = api.coord([n.x0, n.depth]);
                const b = api.coord([n.x1, n.depth + 1]);
                const width = Math.max(b[0] - a[0] - 1, 0);
                return {
                    type: 'rect',
                    shape: { x: a[0], y: a[1], width, height: b[1] - a[1] - 1 },
                    style: { fill: PALETTE[(n.depth * 3 + api.value(3)) % PALETTE.length], stroke: '#fff' },
                    textContent: width > 40 ? { style: { text: n.name, fill: '#000', backgroundColor: 'rgba(255,255,255,0.75)', width: width - 6, overflow: 'truncate' } } : undefined,
                    textConfig: { position: 'insideLeft' },
                };
            },
        }],
    };
}

export function mountStalls(main, route, poller) {
    const { job } = route;
    const rank = route.params.rank !== undefined && route.params.rank !== '' ? Number(route.params.rank) : null;
    const note = h('p', { id: 'stalls-note' });
    const ice = h('div', { id: 'icicle', class: 'chart', role: 'img', 'aria-label': 'stall reasons by kernel' });
    const reasons = h('div', { id: 'stall-reasons' });
    const peers = h('div', { id: 'stall-peers' });
    const diffEl = h('div', { id: 'stall-diff', class: 'chart', role: 'img', 'aria-label': 'stall mix of the rank against its peers' });
    fill(main, h('h1', null, 'Stall reasons: ', h('span', { class: 'job-name' }, job), rank !== null ? `, rank ${rank}` : ''),
        note, ice, reasons, h('h2', null, 'Against its peers'), peers, diffEl);
    let c = null;
    let diff = null;
    poller.watch(jobPath(job, 'stalls', { rank: rank ?? undefined, limit: 12 }), (d) => {
        note.textContent = d.note || `${d.samples} stall samples: kernel, then its PCs with the most samples, then their reasons`;
        ice.dataset.nodes = d.samples ? 'drawn' : 'empty';
        const nodes = icicleNodes(d, rank !== null ? `rank ${rank}` : `job ${job}`);
        ice.dataset.pcs = nodes.filter((n) => n.depth === 2 && n.kernel).length;
        if (!c) c = chart(ice, icicleOption(nodes));
        else c.setOption(icicleOption(nodes), { notMerge: true });
        fill(reasons, table('Reasons', ['reason', 'samples', 'share'], d.reasons.map((r) => [r.reason, r.samples, pct(r.pct)])));
        const v = d.vs_peers;
        const mix = v?.comparison?.stall_mix || [];
        fill(peers, v ? [h('p', null, `rank ${v.rank} (${v.why}): ${v.comparison.summary}`),
            mix.length ? table('Stall mix, peers (A) against the rank (B)', ['reason', 'A', 'B', 'change'],
                mix.map((s) => [s.reason, pct(s.a_pct), pct(s.b_pct), `${s.change_pts.toFixed(1)} pts`])) : null]
            : h('p', null, 'No straggler or rank to compare.'));
        diffEl.dataset.reasons = mix.length;
        diffEl.classList.toggle('hidden', !mix.length);
        if (mix.length) {
            if (!diff) diff = chart(diffEl, diffOption(mix));
            else diff.setOption(diffOption(mix), { notMerge: true });
        }
    });
}
