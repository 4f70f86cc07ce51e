// The advice panel (GET /v1/jobs/{job}/advice, docs/analysis.md "Advice"): the advisor's findings
// ranked by the step time each costs (an upper bound, computed as its `how` says), each with the
// numbers seen, the kernels it names and the change to make; the kinds that could not be checked
// and why. ?rank=R is the rank view: the findings of that rank alone (the API's rank parameter;
// a rank the job lacks is the API's 404, shown in the status line).
import { jobPath } from '../api.js';
import { fill, h, table } from '../dom.js';
import { ms, pct } from '../format.js';
import { chart } from '../charts.js';
import { go, href } from '../route.js';

// "idle_between_kernels_ms" -> "idle between kernels (ms)"
function seenLabel(key) {
    const m = key.match(/^(.*)_(ms|us|pct|mib|mb|gb_per_s|per_ms)$/);
    const unit = { ms: 'ms', us: 'µs', pct: '%', mib: 'MiB', mb: 'MB', gb_per_s: 'GB/s', per_ms: 'per ms' };
    return m ? `${m[1].replaceAll('_', ' ')} (${unit[m[2]]})` : key.replaceAll('_', ' ');
}

const fmt = (v) => (Number.isInteger(v) ? v.toLocaleString('en-US') : Number(v).toFixed(Math.abs(v) < 10 ? 2 : 1));

function finding(job, f, i) {
    return h('li', { class: 'finding', 'data-kind': f.kind, 'data-rank': f.rank, id: `finding-${f.kind}` },
        h('h3', null, h('span', { class: 'rank-no' }, `#${i + 1} `), f.title),
        h('p', { class: 'cost' },
            h('strong', null, `costs up to ${ms(f.cost_ms)} per step`), ` (${pct(f.cost_share * 100)} of rank ${f.rank}'s ${ms(f.step_ms)} step)`,
            ` — on `, h('a', { href: href({ view: 'advice', job, params: { rank: f.rank } }) }, `rank ${f.rank}`),
            f.ranks > 1 ? `, above the threshold on ${f.ranks} ranks` : '', '. ', h('code', null, f.kind)),
        table(null, ['seen', 'value'], Object.entries(f.seen || {}).map(([k, v]) => [seenLabel(k), fmt(v)]), { class: 'seen' }),
        f.kernels?.length ? h('p', null, 'Kernels: ', f.kernels.map((k, j) => [j ? ' → ' : '', h('span', { class: 'kernel-name' }, k)])) : null,
        h('p', { class: 'fix' }, h('strong', null, 'Change: '), f.fix),
        h('details', null, h('summary', null, 'How the cost is estimated'), h('p', null, f.how)));
}

function costOption(d) {
    const f = [...d.findings].reverse();
    return {
        grid: { left: 170, right: 40, top: 10, bottom: 35 },
        tooltip: { renderMode: 'richText', formatter: (p) => `${f[p.dataIndex].title}\n${ms(p.value)} per step on rank ${f[p.dataIndex].rank}` },
        xAxis: { type: 'value', name: 'ms per step (upper bound)', nameLocation: 'middle', nameGap: 22 },
        yAxis: { type: 'category', data: f.map((x) => x.kind) },
        series: [{ type: 'bar', data: f.map((x) => +x.cost_ms.toFixed(3)) }],
    };
}

export function mountAdvice(main, route, poller) {
    const { job } = route;
    const rank = route.params.rank !== undefined && route.params.rank !== '' ? Number(route.params.rank) : null;
    const last = route.params.last || '';
    const summary = h('p', { id: 'advice-summary' }, 'Loading…');
    const list = h('ol', { id: 'advice-findings', class: 'findings' });
    const skipped = h('div', { id: 'advice-skipped' });
    const chartEl = h('div', { id: 'advice-chart', class: 'chart short' });
    // a rank number (ranks need not be 0..n-1), empty for the job; Enter or leaving the box applies it
    const scope = h('input', { id: 'advice-rank', type: 'number', min: 0, step: 1, value: rank ?? '', placeholder: 'all', class: 'rank-input' });
    scope.addEventListener('change', () => go({ view: 'advice', job, params: { ...route.params, rank: scope.value } }));
    fill(main, h('h1', null, 'Advice: ', h('span', { class: 'job-name' }, job)),
        h('div', { class: 'controls' }, h('label', { for: 'advice-rank' }, 'findings of rank '), scope,
            h('span', { class: 'meta' }, ' (empty: the job, each finding on the rank where it costs most)')),
        summary, chartEl, list, h('h2', null, 'Not checked'), skipped);
    let c = null;
    poller.watch(jobPath(job, 'advice', { last, rank: rank ?? '' }), (d) => {
        summary.textContent = `${rank !== null ? `Rank ${rank}: ` : ''}${d.findings.length} finding${d.findings.length === 1 ? '' : 's'} over ` +
            `${d.steps_analysed} steps of ${d.ranks_with_steps} rank${d.ranks_with_steps === 1 ? '' : 's'} (steps: ${d.steps_source}; median step ${ms(d.median_step_ms)}). ` +
            `Costs are upper bounds per step; kinds can overlap, so they rank and do not add. ${d.below_threshold} below the noise threshold ` +
            `(${pct(d.min_share * 100)} of the step or ${ms(d.min_cost_ms)}).`;
        fill(list, d.findings.length ? d.findings.map((f, i) => finding(job, f, i))
            : h('li', { class: 'none' }, '✓ Nothing above the noise threshold: no change to suggest.'));
        fill(skipped, d.skipped?.length ? h('ul', null, d.skipped.map((s) => h('li', { 'data-kind': s.kind }, h('code', null, s.kind), ': ', s.why)))
            : h('p', null, 'Every kind was checked.'));
        chartEl.hidden = !d.findings.length;
        if (!d.findings.length) return;
        if (!c) c = chart(chartEl, costOption(d));
        else c.setOption(costOption(d), { notMerge: true });
    });
}
