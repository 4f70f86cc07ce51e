/* PC sampling (stall reasons), opt-in per job: RANKSCOPE_PC_SAMPLING=1. CUPTI's PC sampling is
 * enabled when the process creates its CUDA context — enabled later, after modules are loaded, it
 * sampled nothing on H200 — and stays enabled. Two ways to run it:
 *  - windows (RANKSCOPE_PC_WINDOW_MS > 0): CUPTI's start/stop control, in kernel-serialized
 *    mode, samples only inside windows of that length, one every RANKSCOPE_PC_PERIOD_MS. They
 *    open and close at kernel launches, on the launching thread: a window opens as a launch
 *    begins, after a context synchronize (CUPTI's start wants the GPU idle), and closes as the
 *    first launch after its end returns; what it sampled is drained there and sent with the next
 *    batch. Kernels inside a window run one at a time. This needs a callback on every kernel
 *    launch (a clock read outside windows). Opening and closing windows from the flush thread
 *    instead, in continuous mode, returned no PCs and hung a 2-rank DDP job (commit cb27ffc,
 *    docs/BENCHMARKS.md).
 *  - the whole run (RANKSCOPE_PC_WINDOW_MS=0), in continuous mode (kernels not serialized):
 *    sampling never pauses; the flush thread drains it
 *    every RANKSCOPE_PC_DRAIN_MS, but CUPTI hands PCs over mostly when sampling is turned off at
 *    exit (measured, docs/BENCHMARKS.md).
 * The counts are aggregated per (function, pc offset, stall reason) and sent as stall records
 * with CUPTI's reason names (queried at run time) and the cubin CRC. Other options:
 * RANKSCOPE_PC_SAMPLING_PERIOD (2^N cycles, 5..31; unset = CUPTI's choice — an explicit value is
 * reported to break sampling on some GPUs), RANKSCOPE_PC_HW_BUFFER_MB (64: device memory CUPTI
 * may use; its default is 512), RANKSCOPE_PC_DEBUG=1 (a stderr line per drain and per window,
 * with how long CUPTI took). While on, the collector holds CUPTI's callback subscription: a
 * profiler started later in the process (torch.profiler) takes it over (activity.c). CUPTI
 * requires activity kinds to be enabled before PC sampling (measured), which activity.c does
 * first. Any failure turns PC sampling off for the process, says why once, and leaves activity
 * collection running. */
#ifndef RS_COLLECTOR_PCSAMPLING_H
#define RS_COLLECTOR_PCSAMPLING_H

#include "node-agent/collector/convert.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct rs_pcsampling_options {
    unsigned window_ms; /* 0: the whole run */
    unsigned period_ms; /* a window opens every period_ms (>= window_ms) */
    unsigned drain_ms;
    int sampling_period; /* 2^N cycles; 0 = CUPTI's default */
    unsigned hw_buffer_mb;
    bool debug; /* RANKSCOPE_PC_DEBUG=1: a stderr line at each step of a window */
};


/* Subscribes to context creation, where sampling is turned on. `lock` guards `conv`. Call at
 * injection, before the process creates a context. Returns 0, or -1 (PC sampling stays off, and
 * why was logged). */
int rs_pcsampling_start(rs_convert *conv, pthread_mutex_t *lock,
                        const struct rs_pcsampling_options *o);

/* Closes or opens a window, and drains what was sampled, when it is time (flush thread, every
 * flush period). */
void rs_pcsampling_tick(uint64_t now_ns);

/* Captures on demand (capture.h): a window of `seconds` opens at the next kernel launch (in
 * windows mode; an open one is extended), whatever the period says. Returns 0, or -1 with why in
 * why[len]: PC sampling is not on in this process (it must be asked for at its start,
 * RANKSCOPE_PC_SAMPLING=1), or it failed earlier. In whole-run mode sampling is on already: 0.
 * Flush thread. */
int rs_pcsampling_capture(unsigned seconds, char *why, size_t len);

/* True from a capture's request (rs_pcsampling_capture, windows mode) until its window has
 * closed and what it sampled was drained to the converter (at the first launch after its end);
 * false once PC sampling failed. The capture's mark stays on the frames meanwhile (capture.h).
 * Any thread; takes no lock. */
bool rs_pcsampling_capture_pending(void);

/* Drains the rest, turns sampling off and unsubscribes, before the final flush. */
void rs_pcsampling_finish(void);

#endif
