/* A collector's side of captures on demand (docs/collector.md "Captures"), shared by the CUPTI
 * collector and the simulator: at each flush it reads the capture orders the agent sent
 * (rs_collector_poll_control), starts one through the caller's `start` (turning kernel tracing
 * or PC sampling on), stops it when its seconds are over, and reports started / done / failed in
 * the next frames, which carry the capture's id while it runs (and for one flush after, for the
 * records still in CUPTI's buffers). One capture at a time per process handle: an order for a
 * rank busy with another fails, saying so; an id seen before is ignored (the server repeats an
 * order until it hears it started); an order for another rank than the handle's is ignored and
 * counted. Not thread-safe: the flush thread owns it, like the handle. */
#ifndef RS_NODE_AGENT_CAPTURE_RUN_H
#define RS_NODE_AGENT_CAPTURE_RUN_H

#include "node-agent/collector_client.h"
#include "proto/capture.h"

#include <stdbool.h>
#include <stdint.h>

/* What a capture turns on and off, supplied by the collector. start: turns `kinds` on for
 * `seconds`; returns 0 and the kinds that run in *ran (at least one), or -1 with why[len]
 * (nothing runs). stop: turns off what start turned on. pending (may be NULL): true while
 * records of the capture that ran `ran` are still to come after it ended — a PC-sampling window
 * closes at the first launch after its end and is drained there, which can be flushes later; the
 * mark stays on the frames until one flush after it says false, at most
 * RS_CAPTURE_RUN_MAX_HELD flushes after the end. */
struct rs_capture_ops {
    int (*start)(void *arg, uint32_t kinds, uint32_t seconds, uint32_t *ran, char *why, size_t len);
    void (*stop)(void *arg, uint32_t ran);
    void *arg;
    bool (*pending)(void *arg, uint32_t ran);
};

#define RS_CAPTURE_RUN_MAX_HELD 240u /* flushes: a minute at the collector's default 250 ms */

#define RS_CAPTURE_RUN_SEEN 64 /* ids remembered to ignore repeats */

struct rs_capture_run {
    struct rs_capture_ops ops;
    char job[128 + 1]; /* the rank this handle is */
    uint32_t rank;
    uint64_t seen[RS_CAPTURE_RUN_SEEN];
    unsigned n_seen;
    bool active;
    struct rs_capture_order order; /* the running one */
    uint32_t ran;
    uint64_t end_mono_ns;
    uint64_t clear_mark_id; /* the mark stays for one more tick after a capture ended */
    unsigned held;          /* ticks the mark stayed after the end for pending records */
    bool one_more;          /* pending went false: the mark goes with one more flush */
    uint64_t started, done, failed, ignored; /* counters */
};

/* Sets up `r` for the rank (job, rank) with `ops`. */
void rs_capture_run_init(struct rs_capture_run *r, const char *job, uint32_t rank,
                         const struct rs_capture_ops *ops);

/* One step, at each flush, before the handle is flushed: ends a capture whose time is over, reads
 * orders and starts one. Reports and the mark go through `c`. */
void rs_capture_run_tick(struct rs_capture_run *r, rs_collector *c, uint64_t mono_ns,
                         uint64_t realtime_ns);

/* Ends a running capture now (the process is finishing): reports it done with what ran. */
void rs_capture_run_finish(struct rs_capture_run *r, rs_collector *c, uint64_t realtime_ns);

#endif
