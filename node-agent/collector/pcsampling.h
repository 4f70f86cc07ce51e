/* PC-sampling windows (stall reasons), opt-in per job: RANKSCOPE_PC_SAMPLING=1. Every
 * RANKSCOPE_PC_PERIOD_S seconds (60) the flush thread turns CUPTI's PC sampling on, in continuous
 * mode (kernels are not serialised), on the primary context of the rank's GPU for
 * RANKSCOPE_PC_WINDOW_MS (1000), then drains it and turns it off: a duty cycle of window/period
 * (1.7% by default). Counts arrive aggregated per (function, pc offset, stall reason) and leave as
 * stall records; stall-reason names are CUPTI's, queried at run time; cubins are named by their
 * CRC. Options: RANKSCOPE_PC_SAMPLING_PERIOD (2^N cycles, 5..31; unset = CUPTI's choice — an
 * explicit value is known to break sampling on some GPUs), RANKSCOPE_PC_HW_BUFFER_MB (64: device
 * memory CUPTI may use; its default would be 512). CUPTI requires activity kinds to be enabled
 * before PC sampling (measured), which activity.c does at start. Any failure turns PC sampling off
 * for the process, says why once, and leaves activity collection running. Called only from the
 * flush thread. */
#ifndef RS_COLLECTOR_PCSAMPLING_H
#define RS_COLLECTOR_PCSAMPLING_H

#include "node-agent/collector/convert.h"

#include <pthread.h>
#include <stdint.h>

struct rs_pcsampling_options {
    unsigned window_ms, period_s;
    int sampling_period;     /* 2^N cycles; 0 = CUPTI's default */
    unsigned hw_buffer_mb;
};

/* Reads RANKSCOPE_PC_* (getenv-like `env`); returns 1 when PC sampling is asked for. */
int rs_pcsampling_options_from_env(const char *(*env)(const char *), struct rs_pcsampling_options *o);

/* Arms the windows; the first starts one period after the first kernel is seen (warm-up and
 * module loading stay unsampled). `lock` guards `conv`. Returns 0, or -1 when the CUDA driver's
 * entry points are missing (PC sampling stays off). */
int rs_pcsampling_start(rs_convert *conv, pthread_mutex_t *lock,
                        const struct rs_pcsampling_options *o);

/* Opens or closes a window when it is time (flush thread, every flush period). */
void rs_pcsampling_tick(uint64_t now_ns);

/* Closes an open window (drains it) before the final flush. */
void rs_pcsampling_finish(void);

#endif
