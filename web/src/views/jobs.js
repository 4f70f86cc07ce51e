// The jobs list: every job with its ranks, span, straggler badge and time lost (from each job's
// verdict), filtered by a search box whose text is part of the URL.
import { apiGet, jobPath } from '../api.js';
import { fill, h, table } from '../dom.js';
import { seconds, time } from '../format.js';
import { go, href, parse } from '../route.js';

const VERDICTS_SHOWN = 50; // verdicts fetched per list (one request each)

function badge(verdict) {
    if (!verdict) return h('span', { class: 'badge unknown' }, '…');
    if (verdict.error) return h('span', { class: 'badge unknown', title: verdict.error }, 'no verdict');
    const n = verdict.stragglers?.length || 0;
    if (!n) return h('span', { class: 'badge ok' }, '✓ no straggler');
    const v = verdict.stragglers[0];
    return h('span', { class: 'badge bad', 'data-straggler-rank': v.rank },
        `⚠ rank ${v.rank}: ${v.cause}${n > 1 ? ` (+${n - 1})` : ''}`);
}

export function mountJobs(main, route, poller) {
    const q = route.params.q || '';
    const search = h('input', { type: 'search', id: 'job-search', value: q, placeholder: 'job name contains…', 'aria-label': 'filter jobs' });
    const onlyBad = h('input', { type: 'checkbox', id: 'only-stragglers' });
    if (route.params.stragglers === '1') onlyBad.checked = true;
    const list = h('div', { id: 'jobs-table' });
    const verdicts = new Map();
    let jobs = [];
    const render = () => {
        const needle = search.value.toLowerCase();
        const shown = jobs.filter((j) => j.job.toLowerCase().includes(needle))
            .filter((j) => !onlyBad.checked || verdicts.get(j.job)?.stragglers?.length);
        fill(list, shown.length ? table('Jobs', ['job', 'ranks', 'span', 'last data', 'straggler', 'time lost'],
            shown.map((j) => {
                const v = verdicts.get(j.job);
                const lost = v?.stragglers?.length ? seconds(Math.max(...v.stragglers.map((s) => s.impact_s || 0))) : '–';
                return [h('a', { href: href({ view: 'overview', job: j.job }) }, j.job), j.ranks_seen,
                    seconds(j.span_s || 0), time(j.last_ns), badge(v), lost];
            }), { class: 'jobs' }) : h('p', null, jobs.length ? 'No job matches.' : 'No jobs yet: send one (README tour).'));
    };
    const update = () => {
        if (parse(location.hash).view !== 'jobs') return; // a change event on leaving the page
        go({ view: 'jobs', params: { q: search.value, stragglers: onlyBad.checked ? '1' : '' } });
        render();
    };
    search.addEventListener('change', update);
    search.addEventListener('input', render);
    onlyBad.addEventListener('change', update);
    fill(main, h('h1', null, 'Jobs'),
        h('div', { class: 'controls' }, search, h('label', { for: 'only-stragglers' }, onlyBad, ' with a straggler only')),
        list);
    poller.watch('/v1/jobs', (d) => {
        jobs = d.jobs || [];
        render();
        for (const j of jobs.slice(0, VERDICTS_SHOWN)) {
            if (verdicts.has(j.job)) continue;
            verdicts.set(j.job, null);
            poller.watch(jobPath(j.job, 'stragglers'), (v) => { verdicts.set(j.job, v); render(); },
                (e) => { verdicts.set(j.job, { error: e.message }); render(); });
        }
    });
}
