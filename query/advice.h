/* The advisor (docs/analysis.md "Advice"): ranked findings that say what makes a job's steps
 * slower than they need be, each with the numbers seen, an estimate of the step time it costs
 * (meant as an upper bound: what the step would lose if the cause went entirely, computed as
 * each kind's `how` says; a fix can also remove idle given to another cause, so measured gains
 * ran up to 26% above it: docs/BENCHMARKS.md "Advisor catalogue") and what to change in PyTorch
 * terms. Findings are computed per rank over its last steps (markers, NCCL pattern or kernel
 * period: steps.h) and merged per kind across ranks (the rank where it costs most). Estimates of
 * different kinds may overlap (the same idle can be the host's launch pace and a synchronous
 * copy's): they rank, they do not add. A finding is kept when its cost is at least
 * RS_ADVICE_MIN_SHARE of that rank's median step and RS_ADVICE_MIN_COST_NS: below is noise (a clean
 * job measured on the GPU machine idles ~2% of its step between kernels). Typed here; JSON only at
 * the edge (rs_advice_json). Pure functions over a storage read handle. */
#ifndef RS_QUERY_ADVICE_H
#define RS_QUERY_ADVICE_H

#include "storage/store.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define RS_ADVICE_MIN_SHARE 0.05
#define RS_ADVICE_MIN_COST_NS 20000ull
#define RS_ADVICE_STEPS 50 /* steps per rank analysed (the newest) */

enum rs_advice_kind {
    RS_ADVICE_LAUNCH_BOUND,   /* GPU idle between kernels, waiting for the host to launch */
    RS_ADVICE_HOST_SYNC,      /* GPU idle after host synchronizations inside the step */
    RS_ADVICE_INPUT,          /* GPU idle at the step's start: the input pipeline */
    RS_ADVICE_PAGEABLE_COPY,  /* host<->device copies at pageable bandwidth, blocking the host */
    RS_ADVICE_FP32_GEMM,      /* GEMMs in fp32 without tensor cores */
    RS_ADVICE_UNFUSED,        /* chains of elementwise kernels repeated every step */
    RS_ADVICE_EXPOSED_COMM,   /* NCCL time not overlapped with compute */
    RS_ADVICE_MEMORY_BOUND,   /* kernels stalled on memory (PC sampling) */
    RS_ADVICE_LOAD_IMBALANCE, /* one rank computes longer than the others per step */
    RS_ADVICE_BATCH_SIZE,     /* GPU memory free and the GPU idles: a larger batch amortizes it */
    RS_ADVICE_KIND_COUNT
};

#define RS_ADVICE_SEEN 4       /* numbers seen per finding; their meaning per kind: advice_json.c */
#define RS_ADVICE_SEQUENCE 12  /* kernel names shown for a chain or an example */
#define RS_ADVICE_NAME_LEN 160 /* bytes kept per name (cut at a UTF-8 boundary) */

struct rs_advice_finding {
    enum rs_advice_kind kind;
    uint32_t rank;    /* the rank where it costs most */
    uint32_t ranks;   /* ranks where it is above the threshold */
    uint64_t cost_ns; /* estimated cost per step on that rank */
    uint64_t step_ns; /* that rank's median step */
    double seen[RS_ADVICE_SEEN];
    uint32_t n_names; /* kernel names: the chain (unfused), examples (fp32, memory) */
    char names[RS_ADVICE_SEQUENCE][RS_ADVICE_NAME_LEN];
};

struct rs_advice {
    struct rs_advice_finding *findings; /* cost order, highest first; kept ones only */
    size_t n;
    const char *steps_source; /* rs_steps_source */
    size_t ranks, ranks_with_steps;
    uint64_t median_step_ns;      /* median over ranks of their median step */
    size_t steps_analysed;        /* summed over ranks */
    size_t below_threshold;       /* findings dropped as noise */
    bool stalls_seen;             /* PC-sampling samples in the window */
    size_t ranks_without_kernels; /* ranks whose steps have no kernel records (summarized or
                                     rolled up): no timeline findings there */
    /* GPU memory telemetry (NVML, query/gpus.h) over the steps analysed, for batch_size */
    size_t ranks_with_memory; /* ranks whose GPU sent memory readings */
    uint32_t fullest_rank;    /* the rank whose GPU has the least room */
    double fullest_used_mib, fullest_total_mib;
    uint32_t batch_factor; /* the batch multiple that fits on every GPU (0: not even 2) */
    uint64_t rank;         /* the rank asked for, or RS_ADVICE_ALL_RANKS */
};

/* One rank's findings, or the job's (RS_ADVICE_ALL_RANKS). */
#define RS_ADVICE_ALL_RANKS UINT64_MAX

/* The findings of `job` over each rank's last `last_steps` steps (RS_ADVICE_STEPS when 0). A job
 * whose ranks have no steps gets no findings (steps_source "none"). On success *out (caller
 * frees with rs_advice_free). Returns 0, RS_E_NOT_FOUND, -ENOMEM or a storage error. */
int rs_query_advice(rs_store_read *r, const char *job, size_t last_steps, struct rs_advice **out);

/* The same for one `rank` (RS_ADVICE_ALL_RANKS: every rank, as rs_query_advice): the findings of
 * that rank alone (load imbalance when it is the rank that computes longest; batch size's room is
 * still the fullest GPU's of the job, as one batch size goes to every rank). RS_E_NOT_FOUND also
 * when the job has no such rank. */
int rs_query_advice_rank(rs_store_read *r, const char *job, size_t last_steps, uint64_t rank,
                         struct rs_advice **out);
void rs_advice_free(struct rs_advice *a);

/* The advice as JSON (docs/openapi.yaml, /v1/jobs/{job}/advice); NULL when out of memory. */
json_t *rs_advice_json(const char *job, const struct rs_advice *a);

/* rs_query_advice_rank then rs_advice_json. */
int rs_query_advice_json(rs_store_read *r, const char *job, size_t last_steps, uint64_t rank,
                         json_t **out);

/* The kind's stable name ("launch_bound", ...). */
const char *rs_advice_kind_name(enum rs_advice_kind k);

#endif
