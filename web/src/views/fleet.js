// The fleet (GET /v1/gpus, GET /v1/hosts, docs/telemetry.md "Fleet"): GPUs and hosts ranked by
// how often they were the straggler across jobs, with each GPU's newest NVML reading — a GPU slow
// in most of its jobs is bad hardware, one slow once is more likely the job. #/fleet?show=hosts
// opens the hosts' table.
import { fill, h, table } from '../dom.js';
import { chart } from '../charts.js';
import { go, href } from '../route.js';
import { celsius, mhz, watts } from '../units.js';

const SHOWN = 40; // rows drawn in the chart

function badge(row) {
    if (!row.straggler_jobs) return h('span', { class: 'badge ok' }, '✓ never');
    return h('span', { class: 'badge bad' }, `⚠ ${row.summary}`);
}

function reading(r) {
    if (!r) return '–';
    const capped = r.clock_reasons ? ` (clock reasons 0x${r.clock_reasons.toString(16)})` : '';
    const link = r.pcie_width && r.pcie_width_max && r.pcie_width < r.pcie_width_max ? `, PCIe x${r.pcie_width} of x${r.pcie_width_max}` : '';
    return `${mhz(r.sm_clock_mhz)} of ${mhz(r.sm_clock_max_mhz)}${capped}, ${watts(r.power_watts)}, ${celsius(r.temperature_c)}` +
        `${r.ecc_uncorrected_total ? `, ${r.ecc_uncorrected_total} uncorrected ECC` : ''}${link}`;
}

function jobLink(job) {
    return job ? h('a', { href: href({ view: 'overview', job }), class: 'job-name' }, job) : '–';
}

function shareOption(rows, name) {
    const r = rows.slice(0, SHOWN).reverse();
    return {
        grid: { left: 260, right: 30, top: 30, bottom: 35 },
        legend: { top: 0 },
        tooltip: { trigger: 'axis', renderMode: 'richText' },
        xAxis: { type: 'value', name: 'jobs', nameLocation: 'middle', nameGap: 22, minInterval: 1 },
        yAxis: { type: 'category', data: r.map(name), axisLabel: { width: 250, overflow: 'truncate' } },
        series: [
            { name: 'straggler in', type: 'bar', stack: 'j', data: r.map((x) => x.straggler_jobs) },
            { name: 'not the straggler in', type: 'bar', stack: 'j', data: r.map((x) => x.jobs - x.straggler_jobs) },
        ],
    };
}

export function mountFleet(main, route, poller) {
    const show = route.params.show === 'hosts' ? 'hosts' : 'gpus';
    const pick = h('select', { id: 'fleet-show', 'aria-label': 'show' },
        h('option', { value: 'gpus', selected: show === 'gpus' }, 'GPUs'),
        h('option', { value: 'hosts', selected: show === 'hosts' }, 'hosts'));
    pick.addEventListener('change', () => go({ view: 'fleet', params: { show: pick.value } }));
    const meta = h('p', { class: 'meta', id: 'fleet-meta' });
    const chartEl = h('div', { id: 'fleet-chart', class: 'chart' });
    const tableEl = h('div', { id: 'fleet-table' }, h('p', null, 'Loading…'));
    fill(main, h('h1', null, 'Fleet'), h('div', { class: 'controls' }, h('label', { for: 'fleet-show' }, 'rank '), pick,
        h('span', null, ' by how often they were the straggler')), meta, chartEl, tableEl);
    let c = null;
    const draw = (rows, name, tbl) => {
        fill(tableEl, tbl);
        const opt = shareOption(rows, name);
        chartEl.hidden = !rows.length;
        if (!rows.length) return;
        if (!c) c = chart(chartEl, opt);
        else c.setOption(opt, { notMerge: true });
    };
    const about = (d) => `${d.history}; ${d.verdicts_known} verdicts known${d.rows_omitted ? `, ${d.rows_omitted} rows not shown` : ''}.`;
    if (show === 'gpus') {
        poller.watch('/v1/gpus', (d) => {
            meta.textContent = about(d);
            // UUIDs differ at their ends: the label keeps both
            const label = (u) => (u.length > 26 ? `${u.slice(0, 12)}…${u.slice(-12)}` : u);
            draw(d.gpus, (x) => `${x.straggler_jobs ? '⚠ ' : ''}${label(x.gpu_uuid)}`, d.gpus.length
                ? table('GPUs, worst first', ['GPU', 'host', 'straggler', 'jobs', 'mean slowdown', 'last job (rank)', 'newest reading'],
                    d.gpus.map((x) => [h('span', { class: 'gpu' }, x.gpu_uuid), h('span', { class: 'host' }, x.host || '?'), badge(x),
                        String(x.jobs), x.mean_slowdown ? `+${((x.mean_slowdown - 1) * 100).toFixed(1)}%` : '–',
                        [jobLink(x.last_job), x.last_rank !== undefined ? ` (rank ${x.last_rank})` : ''], reading(x.newest_reading)]),
                    { id: 'fleet-gpus' })
                : h('p', null, 'No GPU seen yet (GPUs are known from the collectors\' reports).'));
        });
    } else {
        poller.watch('/v1/hosts', (d) => {
            meta.textContent = about(d);
            draw(d.hosts, (x) => `${x.straggler_jobs ? '⚠ ' : ''}${x.host}`, d.hosts.length
                ? table('Hosts, worst first', ['host', 'straggler', 'jobs', 'ranks', 'mean slowdown', 'last job'],
                    d.hosts.map((x) => [h('span', { class: 'host' }, x.host), badge(x), String(x.jobs), String(x.ranks),
                        x.mean_slowdown ? `+${((x.mean_slowdown - 1) * 100).toFixed(1)}%` : '–', jobLink(x.last_job)]),
                    { id: 'fleet-hosts' })
                : h('p', null, 'No host seen yet.'));
        });
    }
}
