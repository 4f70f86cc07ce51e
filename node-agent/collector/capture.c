/* Captures on demand in the CUPTI collector (see capture.h): the capture_run state machine with
 * kernel tracing and PC sampling as what a capture turns on. */
#include "node-agent/collector/capture.h"

#include "common/clock.h"
#include "node-agent/capture_run.h"
#include "node-agent/collector/activity.h"
#include "node-agent/collector/pcsampling.h"

#include <stdbool.h>
#include <stdio.h>

static struct {
    bool ready;
    struct rs_capture_run run;
} cap;

static int
start(void *arg, uint32_t kinds, uint32_t seconds, uint32_t *ran, char *why, size_t len)
{
    char kernels_why[RS_CAPTURE_MAX_MESSAGE / 2] = "", pc_why[RS_CAPTURE_MAX_MESSAGE / 2] = "";

    (void)arg;
    *ran = 0;
    if ((kinds & RS_CAPTURE_KERNELS) &&
        rs_activity_capture_kernels(seconds, kernels_why, sizeof kernels_why) == 0)
        *ran |= RS_CAPTURE_KERNELS;
    if ((kinds & RS_CAPTURE_PC_SAMPLING) &&
        rs_pcsampling_capture(seconds, pc_why, sizeof pc_why) == 0)
        *ran |= RS_CAPTURE_PC_SAMPLING;
    snprintf(why, len, "%s%s%s", kernels_why, kernels_why[0] && pc_why[0] ? "; " : "", pc_why);
    return *ran ? 0 : -1;
}

static void
stop(void *arg, uint32_t ran)
{
    (void)arg;
    char why[8];
    if (ran & RS_CAPTURE_KERNELS)
        rs_activity_capture_kernels(0, why, sizeof why);
    /* a PC-sampling window closes by itself at its end (at the first launch after it) */
}

/* A PC-sampling window of the capture that has not closed and drained yet (pcsampling.h). */
static bool
pending(void *arg, uint32_t ran)
{
    (void)arg;
    return (ran & RS_CAPTURE_PC_SAMPLING) && rs_pcsampling_capture_pending();
}

void
rs_capture_tick(rs_convert *conv)
{
    rs_collector *c = rs_convert_client(conv);

    if (!c)
        return; /* not connected yet: the agent cannot have sent anything */
    if (!cap.ready) {
        const char *job;
        uint32_t rank;
        struct rs_capture_ops ops = {start, stop, NULL, pending};
        rs_convert_rank(conv, &job, &rank);
        rs_capture_run_init(&cap.run, job, rank, &ops);
        cap.ready = true;
    }
    rs_capture_run_tick(&cap.run, c, rs_clock_mono_ns(), rs_clock_realtime_ns());
}

void
rs_capture_finish(rs_convert *conv)
{
    rs_collector *c = rs_convert_client(conv);

    if (c && cap.ready)
        rs_capture_run_finish(&cap.run, c, rs_clock_realtime_ns());
}
