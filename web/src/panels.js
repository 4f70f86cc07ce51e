// The panels' hooks into main.js (kept here so that main.js changes by a few lines): their views
// and titles, the Fleet link in the navigation, and the hang banner above every view of a job.
import { h } from './dom.js';
import { href } from './route.js';
import { mountAdvice } from './views/advice.js';
import { mountFleet } from './views/fleet.js';
import { mountGpus } from './views/gpus.js';
import { mountHangs, watchHangs } from './views/hangs.js';

export const PANEL_MOUNT = { gpus: mountGpus, advice: mountAdvice, hangs: mountHangs, fleet: mountFleet };
export const PANEL_TITLES = { gpus: 'GPUs', advice: 'Advice', hangs: 'Hangs' };

export function panelsNav(route) {
    return h('a', { href: href({ view: 'fleet' }), 'aria-current': route.view === 'fleet' ? 'page' : null }, 'Fleet');
}

// Before a view mounts: the banner of the job's open hangs (empty while none), above <main>.
export function panelsShow(route, poller) {
    let el = document.getElementById('hang-alerts');
    if (!el) {
        el = h('div', { id: 'hang-alerts', 'aria-live': 'assertive' });
        document.getElementById('main').before(el);
    }
    el.replaceChildren();
    if (route.job) watchHangs(el, route.job, poller);
}
