/* Per rank and step (docs/analysis.md "Steps"): step_time, compute_time (union of non-NCCL kernel
 * intervals), comm_time (union of NCCL kernel intervals), exposed_comm (NCCL time not overlapped by
 * compute), idle_time (no kernel running) and host_gap (from the step's start to its first kernel).
 * Steps come from the step records (NVTX markers or the simulator), each lasting until the next
 * one starts (markers are host time; the GPU may work past a marker's end); a rank without any is
 * given
 * steps inferred from its NCCL collectives of the job's last RS_INFER_WINDOW_NS (step_infer.h),
 * and a rank without a periodic NCCL pattern steps from its kernel-name period (kernel_period.h).
 * Metrics of settled steps are read from the stored step summaries when the
 * server has stored them (storage: stepsum), otherwise computed from the kernels; computed metrics
 * of settled steps are flagged so that the server can store them. Pure functions over a storage
 * read handle. */
#ifndef RS_QUERY_STEPS_H
#define RS_QUERY_STEPS_H

#include "storage/store.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A step is settled — its metrics will not change — once the records of every live rank reach this
 * far past its end (the collector hands records over every 250 ms, CUPTI within its buffer period;
 * its collectives need the other ranks' records), or once the job has sent nothing for this long.
 */
#define RS_STEP_SETTLE_NS 2000000000ull
/* A rank whose records are this far behind the newest rank's is gone and holds nothing up. */
#define RS_RANK_GONE_NS 60000000000ull
/* Collectives read to infer the steps of a rank without step records. */
#define RS_INFER_WINDOW_NS 120000000000ull

struct rs_rank_steps {
    uint32_t rank;
    struct rs_step_summary *steps; /* step order */
    size_t n;
    bool *measured;   /* per step: metrics measured by the agent (NULL: none); see rs_step_record */
    bool *summarized; /* per step: its summary was stored already (NULL: none) */
    bool *to_store;   /* per step: computed from kernels now and settled (NULL: none) */
    size_t n_to_store;
    uint32_t inferred_period; /* steps inferred: collectives per step; 0: from step records */
    bool kernel_period;       /* inferred from the kernel-name period: inferred_period counts
                                 kernels (query/kernel_period.h) */
};

/* The last `last_steps` steps of every rank of `job` (caller frees with rs_job_steps_free).
 * Returns 0, RS_E_NOT_FOUND, or a storage error. */
int rs_query_job_steps(rs_store_read *r, const char *job, size_t last_steps,
                       struct rs_rank_steps **out, size_t *n_ranks);
/* The same for the `last_steps` steps up to and including step `until_step` (a past window;
 * inferred steps come from the job's last RS_INFER_WINDOW_NS only). */
int rs_query_job_steps_until(rs_store_read *r, const char *job, size_t last_steps,
                             uint64_t until_step, struct rs_rank_steps **out, size_t *n_ranks);
void rs_job_steps_free(struct rs_rank_steps *ranks, size_t n_ranks);

/* Incremental loads (the server's evaluator loads a running job's last steps every few seconds):
 * rs_job_steps_keep_final trims each rank of a load to its oldest steps that are final — their
 * summary stored (`summarized`), or about to be (`to_store`, when with_to_store) — dropping the
 * per-step flags; inferred steps are never final. Passed back as `kept` (rank order) to
 * rs_query_job_steps_kept, those steps are taken from memory and only the newer ones are read
 * (each rank's newest kept step is read again: its end moves to the start of the next step when
 * that arrives). The answer is the one rs_query_job_steps_until gives, as long as `kept` came from
 * the same job (a job deleted and sent again under its name is another job: compare first_ns of
 * rs_store_job_get). `kept` is only read. */
void rs_job_steps_keep_final(struct rs_rank_steps *ranks, size_t n_ranks, bool with_to_store);
/* Whether step k of rk is final in that sense. */
static inline bool
rs_step_is_final(const struct rs_rank_steps *rk, size_t k, bool with_to_store)
{
    return (rk->summarized && rk->summarized[k]) ||
           (with_to_store && rk->to_store && rk->to_store[k]);
}
int rs_query_job_steps_kept(rs_store_read *r, const char *job, size_t last_steps,
                            uint64_t until_step, const struct rs_rank_steps *kept,
                            size_t n_kept_ranks, struct rs_rank_steps **out, size_t *n_ranks);

/* Where the steps came from: "markers" (step records), "inferred" (the NCCL pattern,
 * step_infer.h), "kernel_period" (the kernel-name period, kernel_period.h), "mixed", or "none"
 * (no rank has steps). */
const char *rs_steps_source(const struct rs_rank_steps *ranks, size_t n_ranks);

/* The same as JSON, with per-rank medians (shape: docs/openapi.yaml, /v1/jobs/{job}/steps). */
int rs_query_steps(rs_store_read *r, const char *job, size_t last_steps, json_t **out);

/* The same answer from steps loaded already (rs_query_job_steps): each rank's newest
 * `last_steps` of them (all when 0). NULL when out of memory. */
json_t *rs_steps_json(const char *job, const struct rs_rank_steps *ranks, size_t n_ranks,
                      size_t last_steps);

/* rs_steps_json's document as text, exactly what json_dumps(doc, flags) of it writes, built one
 * rank at a time: the whole tree of a 10,000-rank job's 30 steps took 545 MiB more anonymous
 * memory at its peak for a 55.7 MB text (tests/bench/query_memory.sh, docs/BENCHMARKS.md); this
 * holds one rank's tree and the text.
 * flags must hold JSON_COMPACT and no JSON_INDENT. Returns 0 with *out (NUL-terminated, the
 * caller frees) and *len, -EINVAL (flags) or -ENOMEM. */
int rs_steps_text(const char *job, const struct rs_rank_steps *ranks, size_t n_ranks,
                  size_t last_steps, size_t flags, char **out, size_t *len);

/* rs_query_steps as text (rs_steps_text): 0, RS_E_NOT_FOUND, -ETIMEDOUT, a storage error,
 * -EINVAL or -ENOMEM. */
int rs_query_steps_text(rs_store_read *r, const char *job, size_t last_steps, size_t flags,
                        char **out, size_t *len);

#endif
