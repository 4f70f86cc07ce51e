// Loaded before app.js (index.html, both deferred): when the page opens on a job's overview, sends
// its first two API requests at once, so that the server computes them while the browser
// downloads and parses the main script (most of it ECharts); api.js's first GET of the same path
// takes the answer (earlyResponse). A few KB: only the route, the paths and the token's header.
import { authHeaders } from './api.js';
import { parse } from './route.js';
import { overviewPaths } from './views/overview_paths.js';

const route = parse(location.hash);
const early = new Map();
if (route.view === 'overview' && route.job) {
    for (const path of Object.values(overviewPaths(route))) {
        // the same request api.js makes (token, no cache); a failure is api.js's to see again
        early.set(path, fetch(path, { headers: authHeaders(), cache: 'no-store', credentials: 'omit' }).catch(() => null));
    }
}
window.rankscopeEarly = early;
