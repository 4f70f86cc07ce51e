// Stall reasons: an icicle (flame graph, top down) of PC-sampling stall samples, scope -> kernel
// -> reason, drawn with ECharts' custom series; and the straggler's (or the chosen rank's)
// difference from its peers (GET /v1/jobs/{job}/stalls).
import { jobPath } from '../api.js';
import { fill, h, table } from '../dom.js';
import { pct } from '../format.js';
import { chart, PALETTE } from '../charts.js';

const ROW_PX = 28;

// Flattens the answer into rectangles {depth, x0, x1, name, samples}: x in [0, 1].
export function icicleNodes(d, scopeName) {
    const total = d.samples || 0;
    const nodes = [{ depth: 0, x0: 0, x1: 1, name: scopeName, samples: total }];
    if (!total) return nodes;
    let x = 0;
    for (const k of d.kernels || []) {
        const w = k.samples / total;
        nodes.push({ depth: 1, x0: x, x1: x + w, name: k.name, samples: k.samples });
        let rx = x;
        for (const r of k.reasons || []) {
            const rw = r.samples / total;
            nodes.push({ depth: 2, x0: rx, x1: rx + rw, name: r.reason, samples: r.samples });
            rx += rw;
        }
        x += w;
    }
    if (x < 0.999) nodes.push({ depth: 1, x0: x, x1: 1, name: 'other kernels', samples: Math.round((1 - x) * total) });
    return nodes;
}

function icicleOption(nodes) {
    return {
        grid: { left: 0, right: 0, top: 0, bottom: 0 },
        xAxis: { type: 'value', min: 0, max: 1, show: false },
        yAxis: { type: 'value', min: 0, max: 3, inverse: true, show: false },
        tooltip: { renderMode: 'richText', formatter: (p) => `${nodes[p.dataIndex].name}\n${nodes[p.dataIndex].samples} samples (${pct((nodes[p.dataIndex].x1 - nodes[p.dataIndex].x0) * 100)})` },
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
    fill(main, h('h1', null, 'Stall reasons: ', h('span', { class: 'job-name' }, job), rank !== null ? `, rank ${rank}` : ''),
        note, ice, reasons, h('h2', null, 'Against its peers'), peers);
    let c = null;
    poller.watch(jobPath(job, 'stalls', { rank: rank ?? undefined, limit: 12 }), (d) => {
        note.textContent = d.note || `${d.samples} stall samples`;
        ice.dataset.nodes = d.samples ? 'drawn' : 'empty';
        const nodes = icicleNodes(d, rank !== null ? `rank ${rank}` : `job ${job}`);
        if (!c) c = chart(ice, icicleOption(nodes));
        else c.setOption(icicleOption(nodes), { notMerge: true });
        fill(reasons, table('Reasons', ['reason', 'samples', 'share'], d.reasons.map((r) => [r.reason, r.samples, pct(r.pct)])));
        const v = d.vs_peers;
        fill(peers, v ? [h('p', null, `rank ${v.rank} (${v.why}): ${v.comparison.summary}`),
            v.comparison.stall_mix?.length ? table('Stall mix, peers (A) against the rank (B)', ['reason', 'A', 'B', 'change'],
                v.comparison.stall_mix.map((s) => [s.reason, pct(s.a_pct), pct(s.b_pct), `${s.change_pts.toFixed(1)} pts`])) : null]
            : h('p', null, 'No straggler or rank to compare.'));
    });
}
