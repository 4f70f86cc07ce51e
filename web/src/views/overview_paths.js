// The API paths the job overview asks for first (its verdict and its heatmap), in one place for
// the overview (views/overview.js) and for early.js, which sends them before the main script has
// been parsed.
import { jobPath } from '../api.js';

export const METRICS = {
    step_ms: 'step time', compute_ms: 'compute', comm_ms: 'NCCL (all)',
    exposed_comm_ms: 'exposed NCCL', idle_ms: 'idle', host_gap_ms: 'host gap',
};
const COLUMNS = 200;

// compute by default: in data-parallel training every rank's step takes as long as the slowest's
// (they wait for it in NCCL), so a slow GPU shows in compute time, not in step time
export const metricOf = (route) => (METRICS[route.params.metric] ? route.params.metric : 'compute_ms');

// The heatmap's window: the whole job (default), each rank's newest steps (last=N), or a range of
// steps (from_step, to_step) — all in the URL.
export function windowParams(p) {
    if (p.last) return { last: p.last };
    return { from_step: p.from_step, to_step: p.to_step };
}

export function overviewPaths(route) {
    return {
        stragglers: jobPath(route.job, 'stragglers'),
        heatmap: jobPath(route.job, 'heatmap', { metric: metricOf(route), columns: COLUMNS, ...windowParams(route.params) }),
    };
}
