// NCCL: wait skew per communicator and op (p50/p95/max), the last arriver per rank (how often
// each rank arrived last at a collective) and the wait per rank (GET /v1/jobs/{job}/skew).
import { jobPath } from '../api.js';
import { fill, h, table } from '../dom.js';
import { ms, pct } from '../format.js';
import { chart } from '../charts.js';

function ranksOption(d) {
    const ranks = d.ranks.map((r) => String(r.rank));
    return {
        grid: { left: 70, right: 70, top: 40, bottom: 40 },
        legend: { top: 0 },
        tooltip: { trigger: 'axis', renderMode: 'richText' },
        xAxis: { type: 'category', name: 'rank', nameLocation: 'middle', nameGap: 25, data: ranks },
        yAxis: [{ type: 'value', name: 'arrived last (%)', max: 100 }, { type: 'value', name: 'wait (ms)' }],
        series: [
            { name: 'arrived last', type: 'bar', data: d.ranks.map((r) => +(r.last_frac * 100).toFixed(2)) },
            { name: 'NCCL wait', type: 'line', yAxisIndex: 1, symbol: 'diamond', data: d.ranks.map((r) => +r.wait_ms.toFixed(3)) },
        ],
    };
}

export function mountNccl(main, route, poller) {
    const { job } = route;
    const summary = h('p', { id: 'skew-summary' });
    const comms = h('div', { id: 'communicators' });
    const ranksEl = h('div', { id: 'skew-ranks', class: 'chart' });
    fill(main, h('h1', null, 'NCCL skew: ', h('span', { class: 'job-name' }, job)), summary,
        h('h2', null, 'Per communicator and op'), comms, h('h2', null, 'Per rank: last arrivals and wait'), ranksEl);
    let c = null;
    poller.watch(jobPath(job, 'skew'), (d) => {
        summary.textContent = `${d.instances} collective instances; skew p50 ${ms(d.skew_ms.p50)}, p95 ${ms(d.skew_ms.p95)}, max ${ms(d.skew_ms.max)}` +
            (d.unmatched_instances ? `; ${d.unmatched_instances} unmatched` : '');
        fill(comms, table(null, ['communicator', 'op', 'instances', 'wait', 'skew p50', 'p95', 'max'],
            (d.communicators || []).map((k) => [k.comm, k.op, k.instances, ms(k.wait_ms), ms(k.skew_ms.p50), ms(k.skew_ms.p95), ms(k.skew_ms.max)])));
        const worst = [...d.ranks].sort((a, b) => b.last_frac - a.last_frac)[0];
        if (worst) summary.append(` — rank ${worst.rank} arrives last most often (${pct(worst.last_frac * 100)}).`);
        if (!c) c = chart(ranksEl, ranksOption(d));
        else c.setOption(ranksOption(d));
    });
}
