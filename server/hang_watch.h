/* The server's hang watch (issue 25, "Hangs"): every `period_ms` it applies the hang rule
 * (query/hangs.h) to every job that received data within `active_s` and keeps the verdicts it
 * found on the loop thread: a new one is logged once (RS-HANG-RAISED: job, op, seq,
 * communicator, since, the waiting ranks and those that never arrived, with host and GPU,
 * escaped) and counted; one no longer found is logged (RS-HANG-CLEARED) and counted. /metrics
 * exports the counts (hangs_active, hangs_raised_total, hangs_cleared_total). The REST answer
 * (GET /v1/jobs/{job}/hangs) is computed on request by the same rule. Reads rank infos on the
 * loop thread: a few bytes per rank of the running jobs. */
#ifndef RS_SERVER_HANG_WATCH_H
#define RS_SERVER_HANG_WATCH_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Hangs kept once cleared, for their history (the newest, over all jobs). */
#define RS_HANG_HISTORY 1024

struct rs_server;
typedef struct rs_hang_watch rs_hang_watch;

/* Starts the timer (period_ms 0: no watch; the REST answer still works). Returns 0 or -ENOMEM. */
int rs_hang_watch_start(struct rs_server *srv, unsigned period_ms, unsigned active_s,
                        rs_hang_watch **out);

/* Stops the timer (loop thread); freed once the loop has closed it. NULL is fine. */
void rs_hang_watch_close(rs_hang_watch *w);

struct rs_hang_watch_stats {
    uint64_t active, raised, cleared, errors;
};
/* The hangs of `job` the watch raised — also before a restart: each raise and clear is kept in the
 * store (storage/store.h rs_store_hang_put), read back at the start —, newest first (at most the newest
 * RS_HANG_HISTORY of all jobs): communicator, op, seq, since_ns, raised_ns (when the watch first
 * found it), cleared_ns (null while open), comm_size, waiting (how many), never_arrived (the first
 * 16 ranks) and never_arrived_count. Loop thread. An empty array for NULL (no watch); NULL when
 * out of memory. */
json_t *rs_hang_watch_history_json(const rs_hang_watch *w, const char *job);

/* Loop thread; all zero for NULL. */
void rs_hang_watch_get_stats(const rs_hang_watch *w, struct rs_hang_watch_stats *out);

#endif
