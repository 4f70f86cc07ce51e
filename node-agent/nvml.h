/* NVML, loaded at run time: the agent reads each GPU of its node through libnvidia-ml.so.1 without
 * linking against it, so that one agent binary runs on nodes with and without NVIDIA's driver.
 * Every function is looked up on its own and every query may fail on its own: a missing function,
 * an unsupported query or an NVML error leaves that field group out of the sample (its bit in
 * rs_gpu_sample.present stays clear) and is counted; nothing else is affected.
 * Not thread-safe: one thread (the sampler's, gpu_sampler.h) owns an rs_nvml. */
#ifndef RS_NODE_AGENT_NVML_H
#define RS_NODE_AGENT_NVML_H

#include "proto/wire.h"

#include <stddef.h>
#include <stdint.h>

/* Where NVIDIA's driver installs it; --nvml-library overrides (tests load a fake). */
#define RS_NVML_DEFAULT_LIBRARY "libnvidia-ml.so.1"
#define RS_NVML_MAX_GPUS 64u

typedef struct rs_nvml rs_nvml;

struct rs_nvml_stats {
    uint64_t reads;             /* rs_nvml_read calls */
    uint64_t field_errors;      /* queries NVML answered with an error (not "not supported") */
    uint64_t unsupported;       /* queries NVML answered "not supported" */
    uint32_t missing_functions; /* functions the library does not export (looked up once) */
    uint64_t xids;              /* XID events received */
};

/* Loads `library` (a file name for the dynamic loader's search, or a path), initializes NVML and
 * enumerates the GPUs (at most RS_NVML_MAX_GPUS; GPUs whose handle or UUID NVML refuses are left
 * out), and registers XID events where NVML supports them. Returns 0; RS_E_NOT_FOUND when the
 * library cannot be loaded or lacks nvmlInit; -ENODEV when NVML's initialization or
 * device count fails (no driver, no permission). On error `why` says why (for one log line). */
int rs_nvml_open(const char *library, rs_nvml **out, char *why, size_t why_len);

/* GPUs enumerated at open. */
unsigned rs_nvml_gpu_count(const rs_nvml *n);

/* The UUID of GPU `i` (< rs_nvml_gpu_count), owned by `n`. */
const char *rs_nvml_gpu_uuid(const rs_nvml *n, unsigned i);

/* Reads GPU `i` into *s at CLOCK_REALTIME `now_ns`: s->uuid points into `n`; the XIDs received
 * since the previous read of the GPU are in xid_count/last_xid (and then forgotten). Never
 * fails: what NVML does not answer is left out of s->present. */
void rs_nvml_read(rs_nvml *n, unsigned i, uint64_t now_ns, struct rs_gpu_sample *s);

/* Waits up to `timeout_ms` for XID events and counts them per GPU. Returns at once (0) when no
 * event set could be registered, 1 when it waited on NVML. */
int rs_nvml_wait_events(rs_nvml *n, unsigned timeout_ms);

/* Calls fn for each NVML function called since open (by rs_nvml_read and the probes of open):
 * its name, calls, and the wall time spent in it. */
void rs_nvml_function_times(const rs_nvml *n,
                            void (*fn)(void *arg, const char *name, uint64_t calls, uint64_t ns),
                            void *arg);

/* The counters above. */
void rs_nvml_get_stats(const rs_nvml *n, struct rs_nvml_stats *out);

/* Shuts NVML down and unloads the library. NULL is fine. */
void rs_nvml_close(rs_nvml *n);

#endif
