// Hangs (GET /v1/jobs/{job}/hangs, docs/analysis.md "Hangs"): a banner above every view of a job
// while one of its NCCL operations hangs — communicator, op, seq, since when, the ranks waiting
// and the ranks that never arrived with their host and GPU — and the hangs view: the open hangs in
// full and their history (the answer's `history`: what the server's hang watch raised and cleared
// kept in the store, so across restarts).
import { jobPath } from '../api.js';
import { fill, h, table } from '../dom.js';
import { time } from '../format.js';
import { href } from '../route.js';


function whoText(w) {
    return [`rank ${w.rank} (host `, h('span', { class: 'host' }, w.host || '?'), ', GPU ', h('span', { class: 'gpu' }, w.gpu_uuid || '?'), ')'];
}

function hangBanner(job, d) {
    if (!d.hangs?.length) return null;
    return h('div', { class: 'banner bad hang', id: 'hang-banner', role: 'alert' }, d.hangs.map((x) =>
        h('div', { class: 'hang', 'data-op': x.op, 'data-seq': x.seq },
            h('strong', null, `⚠ Hang: ${x.op} seq ${x.seq}`), ' on communicator ', h('code', null, x.comm),
            ` in flight since ${time(x.since_ns)}: ${x.waiting.length} of ${x.comm_size} ranks waiting; `,
            x.never_arrived.length ? ['never arrived: ', x.never_arrived.map((w, i) =>
                h('span', { class: 'missing-rank', 'data-rank': w.rank }, i ? '; ' : '', whoText(w)))] : 'every known member started it',
            x.never_arrived_unknown ? ` (+${x.never_arrived_unknown} members not known by rank)` : '',
            '. ', h('a', { href: href({ view: 'hangs', job }) }, 'hang details'))));
}

// The banner above a job's views: el is filled while a hang is open, emptied when it clears.
export function watchHangs(el, job, poller) {
    poller.watch(jobPath(job, 'hangs'), (d) => {
        fill(el, hangBanner(job, d));
    }, () => fill(el)); // no answer: no banner (the view itself reports API errors)
}

function openHang(x) {
    return h('section', { class: 'hang-detail', 'data-seq': x.seq },
        h('h3', null, `${x.op} seq ${x.seq} on `, h('code', null, x.comm)),
        h('p', null, `In flight since ${time(x.since_ns)}; communicator of ${x.comm_size} ranks.`),
        table('Never arrived (did not start it)', ['rank', 'host', 'GPU'],
            x.never_arrived.map((w) => [String(w.rank), h('span', { class: 'host' }, w.host || '?'), h('span', { class: 'gpu' }, w.gpu_uuid || '?')]),
            { class: 'never-arrived' }),
        x.never_arrived_unknown ? h('p', null, `${x.never_arrived_unknown} more members did not start it (not known by rank).`) : null,
        table('Waiting (started it)', ['rank', 'host', 'GPU', 'on the GPU'],
            x.waiting.map((w) => [String(w.rank), h('span', { class: 'host' }, w.host || '?'), h('span', { class: 'gpu' }, w.gpu_uuid || '?'),
                w.gpu_started ? 'kernel started' : 'not started on the GPU']), { class: 'waiting' }));
}

export function mountHangs(main, route, poller) {
    const { job } = route;
    const openEl = h('div', { id: 'hangs-open' }, h('p', null, 'Loading…'));
    const histEl = h('div', { id: 'hangs-history' });
    fill(main, h('h1', null, 'Hangs: ', h('span', { class: 'job-name' }, job)),
        h('h2', null, 'Open'), openEl,
        h('h2', null, 'History'),
        h('p', { class: 'meta' }, 'The hangs the server\'s hang watch raised (kept in its store, across restarts; raised: when the watch first found it; cleared: when it found it gone).'),
        histEl);
    poller.watch(jobPath(job, 'hangs'), (d) => {
        const hist = d.history || [];
        fill(openEl, d.hangs?.length ? d.hangs.map(openHang) : h('p', { class: 'none' }, '✓ No open hang.'),
            d.malformed_statuses ? h('p', null, `${d.malformed_statuses} in-flight reports could not be read.`) : null);
        fill(histEl, hist.length ? table(null, ['op', 'seq', 'communicator', 'since', 'raised', 'cleared', 'ranks waiting', 'never arrived'],
            hist.map((e) => [e.op, String(e.seq), h('code', null, e.comm), time(e.since_ns), time(e.raised_ns),
                e.cleared_ns ? time(e.cleared_ns) : h('strong', null, '⚠ open'), `${e.waiting} of ${e.comm_size}`,
                e.never_arrived.join(', ') + (e.never_arrived_count > e.never_arrived.length ? ` (+${e.never_arrived_count - e.never_arrived.length})` : '') || '–']),
            { class: 'hang-history' }) : h('p', null, 'None recorded (or the server\'s hang watch is off: --hang-check-ms 0).'));
    });
}
