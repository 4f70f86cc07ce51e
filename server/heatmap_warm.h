/* Warming the whole-job heatmap cache (query/heatmap.h) in the background: after a start, the
 * first whole-job heatmap of a large job read every stored step (4-23 s for a 1,024-rank hour,
 * docs/BENCHMARKS.md "Dashboard") while the dashboard waited. The server instead reads them once,
 * on a query thread, for the jobs that received data recently (--heatmap-warm-s) and for a job
 * when an import into it was committed, one job at a time, so that the dashboard's first open
 * finds them cached; and, while it runs, every --heatmap-warm-every-s the jobs that received data
 * since the last time, so that a live job nobody opened yet is cached too. Loop thread throughout. */
#ifndef RS_SERVER_HEATMAP_WARM_H
#define RS_SERVER_HEATMAP_WARM_H

#include <stdint.h>

struct rs_server;
typedef struct rs_heatmap_warm rs_heatmap_warm;

/* Queues every job of the store that received data within `recent_s` seconds (0: none), the
 * most recent first, as many as the heatmap cache holds, and starts warming them; then, every
 * `every_s` seconds (0: never), queues the same way the jobs that received data since the last
 * time (the cache reads only what it lacks). Returns 0 or -ENOMEM (nothing queued; the dashboard
 * then reads them on first open, as before); a failed store read is logged and leaves nothing
 * queued. */
int rs_heatmap_warm_start(struct rs_server *srv, uint64_t recent_s, uint64_t every_s,
                          rs_heatmap_warm **out);

/* Queues `job` (its name is copied) unless it is queued already. NULL w or job: no-op. */
void rs_heatmap_warm_job(rs_heatmap_warm *w, const char *job);

struct rs_heatmap_warm_stats {
    uint64_t warmed, failed; /* jobs read into the cache; reads that failed */
    uint64_t queued;         /* waiting or being read now */
};
/* All zero for NULL. */
void rs_heatmap_warm_get_stats(const rs_heatmap_warm *w, struct rs_heatmap_warm_stats *out);

/* Stops the live jobs' timer (its handle closes on the loop's next turn: call it where the
 * server closes its other handles, so that the loop can end). NULL: no-op. */
void rs_heatmap_warm_stop(rs_heatmap_warm *w);

/* Drops what is queued; a read under way finishes (the query pool's close waits for it) and
 * frees itself. Call after rs_heatmap_warm_stop and after the loop has run its close callbacks;
 * w must not be used after. NULL: no-op. */
void rs_heatmap_warm_free(rs_heatmap_warm *w);

#endif
