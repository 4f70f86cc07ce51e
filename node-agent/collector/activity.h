/* CUPTI activity collection for the injected collector: registers the buffer callbacks, enables
 * the activity kinds that do not serialise the GPU (CONCURRENT_KERNEL — never KERNEL — MEMCPY,
 * MEMSET, DEVICE; MARKER for NVTX step ranges when available), and runs our own flush thread that
 * asks CUPTI for completed buffers a few times a second, converts them (convert.h) and sends them
 * to the agent. The application's threads only ever get a fresh buffer from us (a calloc: zero
 * pages from the kernel, no memset on their time). Process-global, like CUPTI's own callbacks. */
#ifndef RS_COLLECTOR_ACTIVITY_H
#define RS_COLLECTOR_ACTIVITY_H

#include "node-agent/collector/convert.h"
#include "node-agent/collector/pcsampling.h"

#include <stddef.h>

struct rs_activity_options {
    unsigned flush_ms; /* hand-off to the agent: period */
    /* CUPTI's completed buffers are collected this often (≤ flush_ms). Short, because a profiler
     * that takes CUPTI's buffer callbacks later (torch.profiler: Kineto) gets the buffer we had
     * in use handed to its callback, and drops it with the records of its own first moments in it:
     * measured on 2 x H200 (docs/BENCHMARKS.md), torch.profiler kept 40% and 75% of its GPU events
     * with 250 ms, 95% and 100% with 50 ms. */
    unsigned cupti_flush_ms;
    size_t buffer_bytes;                             /* per CUPTI buffer */
    const struct rs_pcsampling_options *pc_sampling; /* NULL: no PC-sampling windows */
};

/* Starts collection into `conv` (owned by the caller, used under our lock until
 * rs_activity_finish). Returns 0 or the CUptiResult of the step that failed (collection is then
 * off and the reason logged once). */
int rs_activity_start(rs_convert *conv, const struct rs_activity_options *opts);

/* Stops the flush thread, force-flushes CUPTI and sends the rest. Call once, from the process
 * that started collection (not from a forked child). */
void rs_activity_finish(void);

/* Forgets the flush thread without touching CUPTI or the socket: for a forked child, where the
 * thread does not exist and CUPTI must not be called. */
void rs_activity_abandon(void);

#endif
