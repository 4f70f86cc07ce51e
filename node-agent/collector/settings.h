/* The collector's settings: every RANKSCOPE_* environment variable it reads, from one table. The
 * collector lives in someone else's process and has no command line or config file, so the
 * environment is its only input; a value it cannot use (not a number, out of range, not one of the
 * choices) is reported once, naming the variable, the value and what is used instead — never
 * silently replaced.
 *
 * The variables (docs/collector.md has the whole story of each):
 *   RANKSCOPE_DISABLE           1: the kill switch, nothing at all is done
 *   RANKSCOPE_AGENT_SOCKET      the agent's socket (default /run/rankscope/agent.sock)
 *   RANKSCOPE_FLUSH_MS          flush period, 10 - 60000 (default 250)
 *   RANKSCOPE_BUFFER_KB         CUPTI buffer size, 16 - 65536 (default 4096)
 *   RANKSCOPE_STEP_RANGE        an NVTX range name marking steps, besides "ProfilerStep#N"
 *   RANKSCOPE_SYNC              host synchronization records: api (default), 1 (CUPTI's kind), 0
 *   RANKSCOPE_LAUNCH_WAIT       launch waits: api (default), latency, 0; with kernel windows none
 *                               (activity.c says why; a value other than 0 is then said once)
 *   RANKSCOPE_PC_SAMPLING       1: PC sampling, in windows (pcsampling.h) of
 *   RANKSCOPE_PC_WINDOW_MS      0 (the whole run) or 100 - 600000 ms (default 1000) every
 *   RANKSCOPE_PC_PERIOD_MS      100 - 86400000 ms (default 60000; at least the window);
 *   RANKSCOPE_PC_DRAIN_MS       100 - 600000 (default 1000), RANKSCOPE_PC_SAMPLING_PERIOD 5 - 31
 *                               (2^N cycles; default CUPTI's), RANKSCOPE_PC_HW_BUFFER_MB 16 - 4096
 *                               (default 64), RANKSCOPE_PC_DEBUG 1: a line per window step
 *   RANKSCOPE_KERNELS           window (default): CUPTI kernel, copy and memset records only
 *                               inside windows of RANKSCOPE_WINDOW_MS 100 - 600000 (default
 *                               1000) every RANKSCOPE_WINDOW_PERIOD_MS 1000 - 86400000 (default
 *                               60000; at least the window), aligned on the wall clock (window.h);
 *                               always: all the time (also whenever PC sampling is on)
 *   RANKSCOPE_DETACH            1 (default): with windows, CUPTI detached between them (attach.h)
 *                               unless NVTX is routed to CUPTI (NVTX_INJECTION64_PATH set: its
 *                               markers need CUPTI attached); 0: CUPTI stays attached between
 *                               windows
 *   RANKSCOPE_HANG_MS           an NCCL operation (NCCL profiler plugin) in flight longer than
 *                               max(this, RANKSCOPE_HANG_FACTOR x its communicator's usual time)
 *                               is reported: 0 (never) or 1000 - 86400000 (default 10000);
 *                               RANKSCOPE_HANG_FACTOR 1 - 10000 (default 20)
 *   RANKSCOPE_HOOK_DEBUG        1: say how many call sites the hand-over redirected (activity.h)
 *   RANKSCOPE_DEBUG             1: counts of what was converted, at exit
 * Switches are on when set, not empty and not "0". Identity variables: identity.h. */
#ifndef RS_COLLECTOR_SETTINGS_H
#define RS_COLLECTOR_SETTINGS_H

#include "node-agent/collector/activity.h"
#include "node-agent/collector/identity.h"

#include <stdbool.h>
#include <stddef.h>

struct rs_collector_settings {
    bool disable, debug, hook_debug, pc_sampling;
    const char *agent_socket; /* the environment's string, or the default */
    const char *step_range;   /* NULL when not set */
    long flush_ms, buffer_kb;
    long hang_ms, hang_factor;
    int kernels_in_windows; /* RANKSCOPE_KERNELS=window (a CHOICE: an int) */
    int detach;             /* RANKSCOPE_DETACH (a CHOICE: an int) */
    long window_ms, window_period_ms;
    enum rs_activity_sync sync;
    enum rs_activity_launch_wait launch_wait;
    struct rs_pcsampling_options pc; /* meaningful when pc_sampling */
};

/* Called with one line for each variable whose value was not used. */
typedef void (*rs_settings_report_fn)(const char *line);

/* Fills *out from `env` (getenv, or a stand-in in tests): defaults where a variable is absent,
 * the default where its value cannot be used (then `report` is called once for that variable).
 * Returns the number of values reported. Thread-safety: none needed (called once at injection). */
int rs_collector_settings_read(rs_getenv_fn env, rs_settings_report_fn report,
                               struct rs_collector_settings *out);

#endif
