/* Captures on demand in the CUPTI collector (docs/collector.md "Captures"): at each flush the
 * flush thread reads the capture orders the agent sent on the process's connection, without
 * blocking (node-agent/capture_run.h), and runs them: kernels — the kinds traced in windows stay
 * on for the capture's seconds (activity.h; with RANKSCOPE_KERNELS=always they are on already);
 * pc_sampling — a PC-sampling window of the capture's seconds opens at the next launch
 * (pcsampling.h; only when RANKSCOPE_PC_SAMPLING=1 turned it on at the start, else that part
 * fails, saying so). The records sent meanwhile carry the capture's id; started / done / failed go
 * back in the next frames. Nothing happens before the process's first record opened the agent
 * connection, nor after fork (the handle is inert there). */
#ifndef RS_COLLECTOR_CAPTURE_H
#define RS_COLLECTOR_CAPTURE_H

#include "node-agent/collector/convert.h"

/* One step, on the flush thread, with the caller's lock on `conv` held. */
void rs_capture_tick(rs_convert *conv);

/* A capture still running is ended and reported done (the process is finishing). Same lock. */
void rs_capture_finish(rs_convert *conv);

#endif
