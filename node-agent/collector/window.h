/* Kernel tracing in windows (issue 25, "Collection tiers"): CUPTI's kernel, memcpy/memset,
 * synchronization and launch-call records are on for `window_ns` every `period_ns`, the windows
 * aligned on wall-clock time — window k covers [k x period, k x period + window) of CLOCK_REALTIME
 * — so that every rank of a job, started whenever, traces the same seconds (to the clock error
 * between hosts). Between windows steps come from NVTX markers and collectives from the NCCL
 * profiler plugin, which stay on.
 *
 * The scheduler is a pure function of the two clocks, ticked by the flush thread: a window opens
 * when CLOCK_REALTIME enters one and closes when it leaves it; clock steps cannot keep it open
 * longer than `window_ns` (measured on CLOCK_MONOTONIC) nor open the window just traced again (a
 * step backwards into it waits for the next). A forward step past a whole window skips it; after
 * a step backwards past whole periods windows come at their times again. */
#ifndef RS_COLLECTOR_WINDOW_H
#define RS_COLLECTOR_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

struct rs_window_schedule {
    uint64_t window_ns, period_ns; /* 0 < window_ns <= period_ns */
    /* state (zero-initialised) */
    bool open;
    uint64_t index;       /* the window open now, or the last one opened, plus 1 (0: none yet) */
    uint64_t opened_mono; /* CLOCK_MONOTONIC when it opened */
};

enum rs_window_action { RS_WINDOW_STAY, RS_WINDOW_OPEN, RS_WINDOW_CLOSE };

/* What to do at (realtime_ns, mono_ns): open, close, or nothing; the state follows. */
enum rs_window_action rs_window_tick(struct rs_window_schedule *s, uint64_t realtime_ns,
                                     uint64_t mono_ns);

/* CLOCK_REALTIME of the next window's start after `realtime_ns` (for tests and logs). */
uint64_t rs_window_next_start(const struct rs_window_schedule *s, uint64_t realtime_ns);

/* CLOCK_REALTIME of the next window start or end after `realtime_ns`: when the flush thread
 * wakes to tick, so that a window opens at its second on every rank, not up to a flush interval
 * later (250 ms by default; seen 50 - 250 ms late on an H200 before). */
uint64_t rs_window_next_change(const struct rs_window_schedule *s, uint64_t realtime_ns);

#endif
