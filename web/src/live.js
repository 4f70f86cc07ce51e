// Live refresh in place: a view watches API paths; the poller asks for each again every few
// seconds with the ETag of the last answer and calls the view back only when the answer changed
// (304 otherwise), so a running job's views update without a reload. One poller per shown view.
import { apiGet } from './api.js';

// ?poll_ms=N in the page's address changes the period (tests use a short one).
const PERIOD_MS = Number(new URLSearchParams(location.search).get('poll_ms')) || 3000;

export class Poller {
    constructor(onError) {
        this.watches = [];
        this.onError = onError;
        this.stopped = false;
        this.timer = setInterval(() => this.tick(), PERIOD_MS);
    }

    // Calls onData(data) with path's answer now and whenever it changes; onErr(error) (default:
    // the poller's) when the API refuses.
    watch(path, onData, onErr) {
        const w = { path, onData, onErr, etag: null, busy: false };
        this.watches.push(w);
        return this.fetch(w);
    }

    async fetch(w) {
        if (w.busy || this.stopped) return;
        w.busy = true;
        try {
            const r = await apiGet(w.path, w.etag);
            if (!r.notModified && !this.stopped) {
                w.etag = r.etag;
                w.onData(r.data);
            }
        } catch (e) {
            if (!this.stopped) (w.onErr || this.onError)(e, w.path);
        } finally {
            w.busy = false;
        }
    }

    tick() {
        for (const w of this.watches) this.fetch(w);
    }

    stop() {
        this.stopped = true;
        clearInterval(this.timer);
    }
}
