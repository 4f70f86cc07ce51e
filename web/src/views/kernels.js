// Kernels: the top kernels of the job or of one rank (GET /top), the rank against its peers and
// two jobs or two windows side by side (GET /compare; windows from the URL: since_ns, until_ns,
// with_since_ns, with_until_ns), as bars of ms per step.
import { jobPath } from '../api.js';
import { fill, h, table } from '../dom.js';
import { ms, pct, time } from '../format.js';
import { chart } from '../charts.js';
import { go } from '../route.js';

const short = (name) => (name.length > 48 ? `${name.slice(0, 45)}…` : name);

function topOption(d) {
    const k = [...d.kernels].reverse();
    return {
        grid: { left: 330, right: 30, top: 10, bottom: 30 },
        tooltip: { renderMode: 'richText', formatter: (p) => `${k[p.dataIndex].name}\n${ms(p.value)} per step, ${k[p.dataIndex].calls} calls` },
        xAxis: { type: 'value', name: 'ms per step' },
        yAxis: { type: 'category', data: k.map((x) => short(x.name)), axisLabel: { width: 320, overflow: 'truncate' } },
        series: [{ type: 'bar', data: k.map((x) => +x.ms.toFixed(4)) }],
    };
}

function compareOption(d, aName, bName) {
    const items = [...d.items].reverse();
    return {
        grid: { left: 330, right: 30, top: 30, bottom: 30 },
        legend: { top: 0 },
        tooltip: { trigger: 'axis', renderMode: 'richText' },
        xAxis: { type: 'value', name: 'ms per step' },
        yAxis: { type: 'category', data: items.map((x) => short(x.name)), axisLabel: { width: 320, overflow: 'truncate' } },
        series: [
            { name: aName, type: 'bar', data: items.map((x) => +x.a_ms.toFixed(4)) },
            { name: bName, type: 'bar', data: items.map((x) => +x.b_ms.toFixed(4)) },
        ],
    };
}

export function mountKernels(main, route, poller) {
    const { job } = route;
    const p = route.params;
    const rank = p.rank !== undefined && p.rank !== '' ? Number(p.rank) : null;
    const set = (x) => go({ view: 'kernels', job, params: { ...p, ...x } });
    const rankIn = h('input', { id: 'kernels-rank', type: 'number', min: 0, value: rank ?? '', placeholder: 'all' });
    const withIn = h('input', { id: 'compare-with', type: 'text', value: p.with || '', placeholder: 'another job' });
    const form = h('form', { class: 'controls' },
        h('label', { for: 'kernels-rank' }, 'rank '), rankIn,
        h('label', { for: 'compare-with' }, ' compare with job '), withIn,
        h('button', { type: 'submit' }, 'Show'));
    form.addEventListener('submit', (e) => { e.preventDefault(); set({ rank: rankIn.value, with: withIn.value }); });
    const topEl = h('div', { id: 'top-chart', class: 'chart tall' });
    const topTable = h('div', { id: 'top-table' });
    const topScope = h('p', { id: 'top-scope', class: 'meta' });
    const cmpTitle = h('h2', null);
    const cmpSummary = h('p', { id: 'compare-summary' });
    const cmpEl = h('div', { id: 'compare-chart', class: 'chart tall' });
    fill(main, h('h1', null, 'Kernels: ', h('span', { class: 'job-name' }, job), rank !== null ? `, rank ${rank}` : ''), form,
        h('h2', null, rank !== null ? `Top kernels of rank ${rank}` : 'Top kernels of the job'), topScope, topEl, topTable, cmpTitle, cmpSummary, cmpEl);
    let top = null;
    poller.watch(jobPath(job, 'top', { rank: rank ?? undefined, limit: 15 }), (d) => {
        if (!top) top = chart(topEl, topOption(d));
        else top.setOption(topOption(d));
        const sc = d.scope || {};
        topScope.textContent = `${sc.rank_steps ?? '–'} rank-steps of ${sc.ranks ?? '–'} rank${sc.ranks === 1 ? '' : 's'}, ` +
            `up to ${time(sc.until_ns)}${d.sampled ? ' (kernels traced in windows: sampled)' : ''}`;
        fill(topTable, table(null, ['kernel', 'kind', 'ms/step', 'calls/step', 'share'],
            d.kernels.map((k) => [h('span', { class: 'kernel-name' }, k.name), k.kind, ms(k.ms), k.calls.toFixed(2), pct(k.share_pct)])));
    });
    let cmpParams = null;
    let names = null;
    const windowB = p.with_since_ns || p.with_until_ns;
    if (windowB) { // two windows of the job (or of the rank) side by side
        cmpParams = { rank: rank ?? undefined, since_ns: p.since_ns, until_ns: p.until_ns,
            with_since_ns: p.with_since_ns, with_until_ns: p.with_until_ns, limit: 15 };
        names = ['window A', 'window B'];
        cmpTitle.textContent = `Two windows${rank !== null ? ` of rank ${rank}` : ''}: A (since_ns/until_ns) against B (with_since_ns/with_until_ns)`;
    } else if (p.with) {
        cmpParams = { with: p.with, rank: rank ?? undefined, with_rank: rank ?? undefined, limit: 15 };
        names = [job, p.with];
        cmpTitle.textContent = 'This job against another';
    } else if (rank !== null) {
        cmpParams = { with_rank: rank, limit: 15 }; // A: every rank of the job, B: this rank
        names = ['all ranks (mean)', `rank ${rank}`];
        cmpTitle.textContent = `Rank ${rank} against its peers`;
    }
    if (cmpParams) {
        let c = null;
        poller.watch(jobPath(job, 'compare', cmpParams), (d) => {
            cmpSummary.textContent = d.summary;
            if (!c) c = chart(cmpEl, compareOption(d, names[0], names[1]));
            else c.setOption(compareOption(d, names[0], names[1]));
        });
    } else {
        cmpEl.remove();
        cmpSummary.textContent = 'Choose a rank to see it against its peers, or a job to compare with.';
    }
}
