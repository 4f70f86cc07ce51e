/* The agent's GPU sampler: a thread of its own reads every GPU of the node through NVML (nvml.h)
 * every interval and keeps the samples until the agent's loop takes them with the next telemetry
 * batch. NVML calls can take milliseconds (and block on a hung GPU): on this thread they never
 * delay the collectors' frames, which the loop serves. Bounded: past `max_samples` held, the
 * oldest are dropped and counted.
 * rs_gpu_sampler_take and _get_stats may be called from any thread; start and stop from one. */
#ifndef RS_NODE_AGENT_GPU_SAMPLER_H
#define RS_NODE_AGENT_GPU_SAMPLER_H

#include "proto/wire.h"

#include <stddef.h>
#include <stdint.h>

typedef struct rs_gpu_sampler rs_gpu_sampler;

struct rs_gpu_sampler_options {
    const char *library;  /* NVML to load ("" = RS_NVML_DEFAULT_LIBRARY) */
    uint64_t interval_ms; /* between two readings of each GPU, >= 1 */
    size_t max_samples;   /* held at most, >= 1 */
};

struct rs_gpu_sampler_stats {
    unsigned gpus;              /* GPUs sampled (0: NVML absent or failed) */
    uint64_t samples;           /* readings taken */
    uint64_t dropped;           /* readings dropped unsent (over max_samples) */
    uint64_t field_errors;      /* NVML queries that failed (nvml.h) */
    uint64_t unsupported;       /* NVML queries the GPU does not support */
    uint32_t missing_functions; /* NVML functions the library lacks */
    uint64_t xids;              /* XID events received */
    uint64_t cpu_ns;            /* CPU time of the sampling thread */
};

/* Starts the thread, which loads NVML. When NVML cannot be loaded or initialized, the thread logs
 * one line (RS-AGENT-NVML) and ends: the sampler then holds nothing (stats.gpus 0) and the agent
 * goes on without telemetry. Returns 0, -ENOMEM, or -errno when the thread cannot start. */
int rs_gpu_sampler_start(const struct rs_gpu_sampler_options *o, rs_gpu_sampler **out);

/* Moves the samples held into a new array (*out, caller frees with rs_gpu_samples_free; the
 * UUIDs are copies in the same allocation). Returns how many (0: *out NULL). */
size_t rs_gpu_sampler_take(rs_gpu_sampler *s, struct rs_gpu_sample **out);
void rs_gpu_samples_free(struct rs_gpu_sample *v);

/* Counters (zeroes for a NULL sampler). */
void rs_gpu_sampler_get_stats(rs_gpu_sampler *s, struct rs_gpu_sampler_stats *out);

/* Stops the thread, closes NVML and frees. NULL is fine. */
void rs_gpu_sampler_stop(rs_gpu_sampler *s);

#endif
