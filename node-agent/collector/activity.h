/* CUPTI activity collection for the injected collector: registers the buffer callbacks, enables
 * the activity kinds that do not serialise the GPU (CONCURRENT_KERNEL — never KERNEL — MEMCPY,
 * MEMSET, DEVICE; host synchronizations as chosen below; MARKER for NVTX step ranges when
 * available), and runs our own flush thread that
 * asks CUPTI for completed buffers a few times a second, converts them (convert.h) and sends them
 * to the agent. The application's threads only ever get a fresh buffer from us (a calloc: zero
 * pages from the kernel, no memset on their time). Process-global, like CUPTI's own callbacks. */
#ifndef RS_COLLECTOR_ACTIVITY_H
#define RS_COLLECTOR_ACTIVITY_H

#include "node-agent/collector/convert.h"
#include "node-agent/collector/pcsampling.h"

#include <stdbool.h>
#include <stddef.h>

/* How host synchronizations are recorded. */
enum rs_activity_sync {
    RS_ACTIVITY_SYNC_OFF,
    /* CUPTI's SYNCHRONIZATION kind, less the queries that found work still running (its header
     * says it reports queries too: on H200 it gave 17.5 Event Syncs per step where the driver
     * made 2.1 cuEventSynchronize calls; docs/BENCHMARKS.md) */
    RS_ACTIVITY_SYNC_RECORDS,
    /* driver-API records of the synchronizing calls only (rs_convert_sync_call): no query
     * records */
    RS_ACTIVITY_SYNC_API,
};

/* Where launch waits (convert.h) get the queue times of kernels from. */
enum rs_activity_launch_wait {
    RS_ACTIVITY_LAUNCH_WAIT_OFF,
    /* driver-API records of the launch calls (rs_convert_launch_call), joined to kernels by
     * correlation id: queued by the end of the call */
    RS_ACTIVITY_LAUNCH_WAIT_API,
    /* CUPTI's latency timestamps on kernel records (queued); on 2 x H200 the DDP job's median
     * step took 1.0115 x with them, 1.0038 x with launch waits off (docs/BENCHMARKS.md, LW3) */
    RS_ACTIVITY_LAUNCH_WAIT_LATENCY,
};

struct rs_activity_options {
    unsigned flush_ms;                               /* flush thread period */
    size_t buffer_bytes;                             /* per CUPTI buffer */
    const struct rs_pcsampling_options *pc_sampling; /* NULL: no PC sampling */
    enum rs_activity_sync sync;
    enum rs_activity_launch_wait launch_wait;
    bool log_hooks; /* say on stderr how many call sites the hand-over hooks redirected */
    /* Kernel tracing in windows (window.h): CONCURRENT_KERNEL, MEMCPY, MEMSET (and host
     * synchronizations when sync is RS_ACTIVITY_SYNC_RECORDS) on for window_ns every period_ns,
     * aligned on the wall clock, opened and closed by the flush thread; 0: always on. In windows
     * launch_wait is taken as RS_ACTIVITY_LAUNCH_WAIT_OFF (activity.c says why). DEVICE and
     * MARKER stay on unless detach. */
    uint64_t window_ns, period_ns;
    /* With windows: CUPTI detached between them (attach.h) — no MARKER records, and nothing of
     * CUPTI's is set at start that a window could not set again (no latency timestamps: the
     * caller turns launch waits off) */
    bool detach;
};

/* Windows opened and closed, and the time the flush thread spent turning the kinds on and off. */
struct rs_activity_window_stats {
    uint64_t opened, closed, open_ns, close_ns;
};
void rs_activity_get_window_stats(struct rs_activity_window_stats *out);

/* Captures on demand (capture.h): turns the kinds traced in windows on now and keeps them on for
 * `seconds`, whatever the schedule says (0: the capture ended; they follow the schedule again at
 * the next window step). With tracing always on there is nothing to do. Returns 0, or -1 with
 * why[len] when CUPTI refused (measured on H100: with PC sampling on, kernel activity cannot be
 * turned on later). Flush thread, with the activity lock held (rs_capture_tick's caller). */
int rs_activity_capture_kernels(unsigned seconds, char *why, size_t len);

/* Starts collection into `conv` (owned by the caller, used under our lock until
 * rs_activity_finish). Returns 0 or the CUptiResult of the step that failed (collection is then
 * off and the reason logged once). */
int rs_activity_start(rs_convert *conv, const struct rs_activity_options *opts);

/* Stops the flush thread, force-flushes CUPTI and sends the rest; nothing when collection was
 * handed over already. From the process that started collection (not from a forked child).
 *
 * Hand-over: rs_activity_start also redirects other libraries' calls of
 * cuptiActivityRegisterCallbacks, cuptiSubscribe and cuptiSubscribe_v2 (got_hook.h). When another
 * CUPTI client (torch.profiler's Kineto) makes one, collection stops for the rest of the process
 * before the call goes on: our buffers come back to us (forced flush), our kinds and PC sampling
 * are turned off, and the client gets a CUPTI of its own with none of its records in our buffers.
 * The condition is logged once and reported (RS_COLLECTOR_STEPPED_ASIDE). */
void rs_activity_finish(void);

/* Forgets the flush thread without touching CUPTI or the socket: for a forked child, where the
 * thread does not exist and CUPTI must not be called. */
void rs_activity_abandon(void);

#endif
