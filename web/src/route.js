// Every view has a URL (in the hash, so the server needs one page only): #/jobs?q=..., or
// #/job/<job>/<view>?rank=R&step=S&metric=M&since_ns=..&until_ns=.. — a deep link restores it.
export const VIEWS = ['overview', 'nccl', 'kernels', 'stalls', 'timeline'];
VIEWS.push('gpus', 'advice', 'hangs'); // the panels (views/gpus.js, advice.js, hangs.js); #/fleet below

export function parse(hash) {
    const s = (hash || '').replace(/^#/, '') || '/jobs';
    const [path, query = ''] = s.split('?');
    const parts = path.split('/').filter(Boolean).map((p) => {
        try { return decodeURIComponent(p); } catch { return p; }
    });
    const params = Object.fromEntries(new URLSearchParams(query));
    if (parts[0] === 'job' && parts[1]) {
        const view = VIEWS.includes(parts[2]) ? parts[2] : 'overview';
        return { view, job: parts[1], params };
    }
    if (parts[0] === 'fleet') return { view: 'fleet', params };
    return { view: 'jobs', params };
}

export function href(route) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(route.params || {})) if (v !== undefined && v !== null && v !== '') q.set(k, v);
    const qs = q.toString() ? `?${q}` : '';
    if (route.view === 'fleet') return `#/fleet${qs}`;
    if (route.view === 'jobs' || !route.job) return `#/jobs${qs}`;
    return `#/job/${encodeURIComponent(route.job)}/${route.view}${qs}`;
}

export function go(route) {
    location.hash = href(route);
}
