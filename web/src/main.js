// The dashboard's entry: reads the route from the URL, shows its view (each view fetches through
// api.js and refreshes in place through a Poller), and the per-job navigation.
import { fill, h } from './dom.js';
import { disposeAll } from './charts.js';
import { Poller } from './live.js';
import { askToken } from './token.js';
import { href, parse } from './route.js';
import { mountJobs } from './views/jobs.js';
import { mountOverview } from './views/overview.js';
import { mountNccl } from './views/nccl.js';
import { mountKernels } from './views/kernels.js';
import { mountStalls } from './views/stalls.js';
import { mountTimeline } from './views/timeline.js';
import { PANEL_MOUNT, PANEL_TITLES, panelsNav, panelsShow } from './panels.js';

performance.mark('app-start'); // (tests/bench/dashboard_overview.mjs: when early.js's requests would have left without it)
const MOUNT = { jobs: mountJobs, overview: mountOverview, nccl: mountNccl, kernels: mountKernels, stalls: mountStalls, timeline: mountTimeline };
const TITLES = { overview: 'Overview', nccl: 'NCCL', kernels: 'Kernels', stalls: 'Stall reasons', timeline: 'Timeline' };
Object.assign(MOUNT, PANEL_MOUNT);
Object.assign(TITLES, PANEL_TITLES);

let poller = null;

function nav(route) {
    const items = [h('a', { href: '#/jobs', 'aria-current': route.view === 'jobs' ? 'page' : null }, 'Jobs')];
    if (route.job) {
        const keep = route.params.rank !== undefined ? { rank: route.params.rank } : {};
        for (const [view, title] of Object.entries(TITLES)) {
            items.push(h('a', { href: href({ view, job: route.job, params: keep }), 'aria-current': route.view === view ? 'page' : null }, title));
        }
    }
    items.splice(1, 0, panelsNav(route));
    fill(document.getElementById('nav'), items);
}

function show() {
    const route = parse(location.hash);
    const main = document.getElementById('main');
    const status = document.getElementById('status');
    if (poller) poller.stop();
    disposeAll();
    status.textContent = '';
    main.dataset.view = route.view;
    poller = new Poller((e, path) => { status.textContent = `${path}: ${e.message}`; });
    nav(route);
    document.title = route.job ? `${route.job} · ${TITLES[route.view]} · rankscope` : 'rankscope';
    // the view's own requests first: the server's query threads (two by default) take them in the
    // order they come, so the hang banner's request waits until the overview has drawn its banner
    // and heatmap (at most a second), then joins the poller like any other
    panelsShow({ ...route, job: null }, poller); // the last view's banner goes now
    const firstRender = MOUNT[route.view](main, route, poller);
    const current = poller;
    Promise.race([firstRender, new Promise((r) => setTimeout(r, 1000))]).then(() => {
        if (poller === current) panelsShow(route, poller);
    });
}

window.addEventListener('hashchange', show);
document.getElementById('token-button').addEventListener('click', () => askToken().then(show));
show();
