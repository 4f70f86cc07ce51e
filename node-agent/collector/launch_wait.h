/* Launch waits: GPU time lost because the host had not yet queued the work (docs/analysis.md
 * "Launch waits", cause host_side). A device is idle in [g0, g1) when no kernel, copy or memset of
 * the process runs on it; the work that ends the gap was queued by the host at q (CUPTI's latency
 * timestamp). When q > g0 the GPU waited for the host from g0 to min(q, g1): that part is a launch
 * wait (a data loader, Python, a host synchronization, a slow launch path). The rest of the gap,
 * after the work was queued, is the GPU's own (dispatch, a wait on another stream's event). Work
 * of unknown queue time (copies, memsets, kernels whose launch call was not seen) ends a gap
 * without a wait. Queue times come with the work (CUPTI's latency timestamps) or apart, by the
 * correlation id of the launch call (the end of a driver-API record of cuLaunchKernel...), in
 * either order: the work waits in the pending set for its call until it is swept.
 *
 * CUPTI delivers a record when its work has completed, so a long kernel's record can come after
 * those of shorter ones that started later; a gap is settled only once no record could still
 * cover it: behind the newest start seen by a lag of at least `min_lag_ns` plus the longest
 * interval seen so far. Records that arrive behind the settled time anyway are counted (late).
 * Memory: the intervals of one lag per device, at most RS_LAUNCH_WAIT_MAX_PENDING; beyond that
 * the oldest settle early (counted as forced).
 *
 * The collector's converter (convert.c) feeds it and sends the waits as host-side records of kind
 * RS_LAUNCH_WAIT (wire.h). No CUPTI here, so CI tests it. Not thread-safe: one owner. */
#ifndef RS_COLLECTOR_LAUNCH_WAIT_H
#define RS_COLLECTOR_LAUNCH_WAIT_H

#include <stdbool.h>
#include <stdint.h>

#define RS_LAUNCH_WAIT_MAX_PENDING (1u << 18) /* intervals held per device (32 bytes each) */
#define RS_LAUNCH_WAIT_MAX_DEVICES 64u
/* Launch calls remembered by correlation id, the newest (16 bytes each): a launch call more than
 * this many launches older than its work's sweep is forgotten (its work counts as unqueued). */
#define RS_LAUNCH_WAIT_CALLS (1u << 17)
#define RS_LAUNCH_WAIT_TRACE_STARTS 16u

typedef struct rs_launch_wait rs_launch_wait;

struct rs_launch_wait_stats {
    uint64_t waits;    /* launch waits emitted */
    uint64_t wait_ns;  /* their total length */
    uint64_t unqueued; /* intervals swept with no queue time */
    uint64_t late;     /* intervals that arrived behind the settled time */
    uint64_t forced;   /* settles brought forward because a device held too many intervals */
    uint64_t refused;  /* intervals not taken: a device beyond the last, or no memory */
};

/* A launch wait on `device`: the GPU idle in [start_ns, end_ns) until the host queued the work
 * of `stream` that followed. Emitted per device in time order. */
typedef void (*rs_launch_wait_fn)(void *arg, uint32_t device, uint32_t stream, uint64_t start_ns,
                                  uint64_t end_ns);

/* A tracker that settles gaps `min_lag_ns` (plus the longest interval seen) behind the newest
 * start. Returns 0 or -ENOMEM. */
int rs_launch_wait_new(uint64_t min_lag_ns, rs_launch_wait **out);
void rs_launch_wait_free(rs_launch_wait *lw);

/* One interval of GPU work [start_ns, end_ns) on `device` and `stream`, queued by the host at
 * `queued_ns`, or (0) by the launch call of `correlation` (0: none; rs_launch_wait_call). Any
 * order. Returns 0, or -ENOMEM / -ERANGE (a 65th device) when it was not taken (counted as
 * refused). May emit: when the device holds RS_LAUNCH_WAIT_MAX_PENDING intervals it settles the
 * older half first. */
int rs_launch_wait_add(rs_launch_wait *lw, uint32_t device, uint32_t stream, uint64_t start_ns,
                       uint64_t end_ns, uint64_t queued_ns, uint32_t correlation,
                       rs_launch_wait_fn emit, void *arg);

/* The launch call of `correlation` (not 0) had queued its work by `queued_ns`. Returns 0 or
 * -ENOMEM (counted as refused). */
int rs_launch_wait_call(rs_launch_wait *lw, uint32_t correlation, uint64_t queued_ns);

/* Tracing (re)started at `at_ns` (a kernel-tracing window opened, activity.c): GPU work before it
 * was not recorded, so a gap that began before it is not known to be idle and gives no launch
 * wait. Times in increasing order; the last RS_LAUNCH_WAIT_TRACE_STARTS are kept (windows are
 * at least a second apart: far more than the intervals pending). */
void rs_launch_wait_traced_from(rs_launch_wait *lw, uint64_t at_ns);

/* Emits the launch waits of every gap that is settled now; with `all`, of every gap up to the
 * last interval (at the end of collection: nothing more is coming). */
void rs_launch_wait_settle(rs_launch_wait *lw, bool all, rs_launch_wait_fn emit, void *arg);

void rs_launch_wait_get_stats(const rs_launch_wait *lw, struct rs_launch_wait_stats *out);

#endif
