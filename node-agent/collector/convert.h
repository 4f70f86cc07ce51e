/* Turns CUPTI activity records into rankscope records for one process: kernels (NCCL kernels
 * become collective records with per-(stream, op) sequence numbers), memcpy, memset, host
 * synchronizations (copy records of the RS_SYNC_* kinds, wire.h) and the launch waits found
 * between the GPU work (launch_wait.h; kind RS_LAUNCH_WAIT); device
 * records give the GPU UUID; NVTX ranges that mark training steps become step records. Kernel names
 * are demangled once per distinct name. The connection to the agent (collector_client.h) is opened
 * at the first timed record, so a launcher process that never runs a kernel sends nothing. Not
 * thread-safe: the caller serialises (activity.c holds a lock). Needs only CUPTI's headers, so CI
 * tests it with fake records. */
#ifndef RS_COLLECTOR_CONVERT_H
#define RS_COLLECTOR_CONVERT_H

#include "node-agent/collector/identity.h"
#include "node-agent/collector/launch_wait.h"
#include "node-agent/collector/plugin.h"
#include "node-agent/collector_client.h"
#include "proto/wire.h"

#include <cupti_activity.h>
#include <cupti_driver_cbid.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rs_convert rs_convert;

struct rs_convert_stats {
    uint64_t kernels, collectives, memcpys, memsets, syncs, steps, stalls; /* converted */
    uint64_t launch_calls;  /* driver-API records of launch calls (queue times) */
    uint64_t plugin_ops;    /* collective records from the NCCL profiler plugin */
    uint64_t nccl_kernels_skipped; /* NCCL kernels CUPTI saw while the plugin reports them */
    uint64_t untimed;       /* records without timestamps (CUPTI's device buffer ran out) */
    uint64_t other;         /* records of kinds we do not convert */
    uint64_t cupti_dropped; /* records CUPTI itself dropped */
    struct rs_launch_wait_stats launch_wait;
};

/* Returns a malloc'd demangled name or NULL, like __cxa_demangle. */
typedef char *(*rs_demangle_fn)(const char *mangled);

struct rs_convert_options {
    const char *socket_path; /* the agent's socket */
    rs_demangle_fn demangle; /* NULL: names stay as CUPTI reports them */
    /* NVTX ranges that mark training steps: "ProfilerStep#N" always (N is the step); ranges
     * named exactly `step_range` too, numbered 0, 1, 2, ... ("" or NULL: none). */
    const char *step_range;
    /* Launch waits settle this far (at least) behind the newest GPU work (launch_wait.h); 0: no
     * launch waits. They need kernel records with queue times (CUPTI's latency timestamps). */
    uint64_t launch_wait_lag_ns;
};

int rs_convert_new(const struct rs_env_identity *id, const struct rs_convert_options *opts,
                   rs_convert **out);
void rs_convert_free(rs_convert *c);

void rs_convert_record(rs_convert *c, const CUpti_Activity *record);

/* Reports a condition (enum rs_collector_flag bits, added to earlier ones) with text for people;
 * it reaches the server with the next flush, even when there are no records (a collector that
 * stepped aside still says so). */
void rs_convert_report(rs_convert *c, uint32_t flag, const char *text);

/* Like rs_convert_report, for a lasting condition that needs no frame of its own (kernels traced
 * in windows): it rides on the first frame the process sends, if it ever sends one. */
void rs_convert_note(rs_convert *c, uint32_t flag, const char *text);

/* Checks a (CUPTI clock, CLOCK_REALTIME) pair: CUPTI's clock is CLOCK_REALTIME unless another tool
 * replaced it (Kineto can install a TSC clock). Returns true the first time the two differ by
 * more than a second (and reports RS_COLLECTOR_CLOCK_REPLACED), false otherwise. */
bool rs_convert_check_clock(rs_convert *c, const struct rs_clock_pair *clock);

/* The CUDA device ordinal of the latest kernel, or -1 before the first. */
int rs_convert_device(const rs_convert *c);

/* One PC-sampling count: `samples` of stall `reason` at `pc_offset` of the (mangled or plain)
 * function `function` in the cubin with CRC `cubin_crc`, on the latest kernel's device. Function
 * names go through the same demangling and interning as kernel names. */
void rs_convert_stall(rs_convert *c, const char *function, const char *reason, uint64_t pc_offset,
                      uint64_t samples, uint64_t cubin_crc);

/* The i-th driver call (cbid) whose driver-API records rs_convert_record turns into host
 * synchronizations — what RANKSCOPE_SYNC=api enables (activity.c); false past the last. */
bool rs_convert_sync_call(size_t i, CUpti_CallbackId *cbid);

/* The i-th driver call that launches kernels (the runtime's launches end in these): driver-API
 * records of them give launch waits their queue times (RANKSCOPE_LAUNCH_WAIT=api, activity.c);
 * PC-sampling windows open and close at them. False past the last. */
bool rs_convert_launch_call(size_t i, CUpti_CallbackId *cbid);

/* One operation the NCCL profiler plugin finished (plugin.h): a collective record with NCCL's
 * communicator hash and exact sequence, named "<func> <algo>/<proto>" ("AllReduce RING/LL") or
 * "<func>" for point-to-point, timed by the GPU (kernel-channel events) or, without them, by its
 * enqueue. While the plugin is active, NCCL kernels from CUPTI give no collective records. */
void rs_convert_plugin_op(rs_convert *c, const struct rs_plugin_op *op);

/* The operations in flight past the hang limit at one drain (rs_plugin_drain's in_flight calls
 * between rs_convert_in_flight_begin and _end): when there are some, the rank's condition gets
 * RS_COLLECTOR_IN_FLIGHT and a status text naming the oldest (proto/in_flight.h) and one stderr
 * line the first time; when there are none any more, both are cleared. */
void rs_convert_in_flight_begin(rs_convert *c);
void rs_convert_in_flight(rs_convert *c, const struct rs_plugin_op *op, uint64_t now_ns);
void rs_convert_in_flight_end(rs_convert *c);

/* Records CUPTI reported as dropped. */
void rs_convert_count_dropped(rs_convert *c, uint64_t n);

/* Kernel tracing (re)started at `at_ns` (CUPTI's clock: a window opened): launch waits are not
 * counted across the untraced time before it (launch_wait.h). */
void rs_convert_traced_from(rs_convert *c, uint64_t at_ns);

/* Sends what was converted (see rs_collector_flush), with the launch waits settled by now — all
 * of them when `last` (the end of collection). 0 when there is nothing to send. */
int rs_convert_flush(rs_convert *c, const struct rs_clock_pair *clock, bool last);

void rs_convert_get_stats(const rs_convert *c, struct rs_convert_stats *out);

/* The agent connection (NULL before the first record opened it), and the rank it speaks for:
 * captures on demand read their orders from it (capture.h). */
rs_collector *rs_convert_client(const rs_convert *c);
void rs_convert_rank(const rs_convert *c, const char **job, uint32_t *rank);

#endif
