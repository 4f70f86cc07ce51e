/* The simulated data-parallel job: N ranks run the traced step template (profile.h) in lockstep
 * through NCCL AllReduce, so every collective ends only after its last rank arrives — a slow rank
 * makes the others wait inside their AllReduce kernels, exactly as in the real traces. Faults:
 * a GPU straggler (its kernels run `slowdown` longer) and a host stall (its host synchronizes
 * with its stream — one Stream Sync record of RS_SIM_SYNC_US — and then starts the step's work
 * `stall_ms` late), both from `onset_step` on (until `recover_step`, when set). Deterministic for
 * a given seed. */
#ifndef RS_SIM_MODEL_H
#define RS_SIM_MODEL_H

#include "sim/stalls.h"
#include "proto/wire.h"

#include <stdint.h>

#define RS_SIM_SYNC_US 15.0 /* a host-stall rank's Stream Sync per step */

struct sim_params {
    uint32_t ranks;
    double step_ms;    /* target step time without faults (scales the template) */
    double noise;      /* relative spread of kernel durations (log-normal sigma) */
    int64_t slow_rank; /* -1 = none */
    double slowdown;   /* 0.1 = 10% slower kernels */
    int64_t stall_rank;
    double stall_ms;
    uint64_t onset_step;
    uint64_t seed;
    uint64_t comm_hash;
    uint64_t recover_step; /* first step without the fault again; 0 = the fault stays */
    uint32_t kernel_split; /* each compute kernel as this many back-to-back launches (>= 1) */
    /* the host's launch pace: the GPU idles this long before each kernel, copy or memset (a
     * launch-bound job: the steps grow by it); 0: the traced median, RS_SIM_LAUNCH_GAP_US */
    double launch_gap_us;
    /* DDP's buckets launched back to back after the backward pass (a small model, or large
     * buckets): every AllReduce waits for the rank's whole compute, so only the first of them
     * shows who arrived late (docs/analysis.md "The rule"); false: each when its layer is done */
    bool buckets_after;
    /* collectives as the NCCL profiler plugin sends them: NCCL's sequence (seq_exact), named
     * "AllReduce RING/LL"; else as CUPTI's NCCL kernels (the template's kernel name) */
    bool nccl_plugin;
};

/* Receives the records of one rank; names are the template's kernel names. */
struct sim_sink {
    void *arg;
    void (*kernel)(void *arg, uint32_t rank, const char *name, const struct rs_kernel_record *k);
    void (*memcpy)(void *arg, uint32_t rank, const struct rs_memcpy_record *m);
    void (*collective)(void *arg, uint32_t rank, const char *name,
                       const struct rs_collective_record *c);
    void (*step)(void *arg, uint32_t rank, const struct rs_step_record *s);
};

typedef struct sim_model sim_model;

/* Starts the job at wall-clock time start_ns. */
int sim_model_new(const struct sim_params *p, uint64_t start_ns, sim_model **out);
void sim_model_free(sim_model *m);

/* Simulates step `step` (0, 1, 2, ... in order) on every rank, emitting its records. Returns the
 * time the step ended on the slowest rank. */
uint64_t sim_model_step(sim_model *m, uint64_t step, const struct sim_sink *sink);

/* The sequence number of the next AllReduce of `rank` (what a collector reports in flight when
 * that AllReduce hangs). */
uint64_t sim_model_next_seq(const sim_model *m, uint32_t rank);

/* Turns synthetic PC sampling on (stalls.h). Returns 0 or -ENOMEM. */
int sim_model_enable_stalls(sim_model *m);

/* Emits the stall counts of `rank` gathered since the last call (nothing when sampling is off). */
void sim_model_emit_stalls(sim_model *m, uint32_t rank, sim_stall_emit emit, void *arg);

#endif
