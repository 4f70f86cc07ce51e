/* The dashboard's rank x step heatmap (GET /v1/jobs/{job}/heatmap, docs/openapi.yaml): a job's
 * steps of every rank (the whole job, a window of steps, or the newest few) binned into at most N
 * columns of consecutive steps, one value per
 * rank and column (the mean of a step metric over the rank's steps in the column), with each
 * column's median over the ranks and its slowest rank — so that a browser draws a 1,024-rank job
 * from a few hundred thousand numbers instead of every step of every rank. Pure functions over a
 * storage read handle (query/steps.h loads the steps). */
#ifndef RS_QUERY_HEATMAP_H
#define RS_QUERY_HEATMAP_H

#include "query/steps.h"

#include <jansson.h>
#include <stddef.h>

/* The step metrics a heatmap can show, as named in the API ("step_ms", ...). */
enum rs_heatmap_metric {
    RS_HEATMAP_STEP,
    RS_HEATMAP_COMPUTE,
    RS_HEATMAP_COMM,
    RS_HEATMAP_EXPOSED_COMM,
    RS_HEATMAP_IDLE,
    RS_HEATMAP_HOST_GAP,
    RS_HEATMAP_METRICS
};

/* The metric called `name` ("step_ms", "compute_ms", "comm_ms", "exposed_comm_ms", "idle_ms",
 * "host_gap_ms"), or -1 for any other text. */
int rs_heatmap_metric_of(const char *name);
/* The API name of metric m (a valid enum rs_heatmap_metric). */
const char *rs_heatmap_metric_name(int m);

/* Bins loaded steps (rs_query_job_steps; only read) into at most `columns` (>= 1) columns of
 * equally many consecutive step numbers, spanning the lowest to the highest step of any rank.
 * Shape (docs/openapi.yaml): {job, metric, steps_source, first_step, last_step, steps_per_column,
 * columns:[{first_step, last_step, start_ns, median_ms, max_ms, max_rank}], ranks:[rank...],
 * values:[[ms or null per column] per rank]}; a rank without a step in a column has null there, a
 * column without any step has null figures. NULL when out of memory. */
json_t *rs_heatmap_json(const char *job, const struct rs_rank_steps *ranks, size_t n_ranks,
                        int metric, size_t columns);

/* Rank-steps a heatmap loads in full (query/steps.h: computed from kernels where the store holds
 * no value for the step yet) when the caller leaves the step count to it: loading steps costs a
 * few microseconds per rank-step, so a 1,024-rank job's newest ~100 steps take about a third of a
 * second (docs/BENCHMARKS.md "Dashboard"), a 16-rank job's 1,000. */
#define RS_HEATMAP_AUTO_RANK_STEPS 100000u
#define RS_HEATMAP_AUTO_MIN_STEPS 30u
#define RS_HEATMAP_AUTO_MAX_STEPS 1000u

/* Which steps a heatmap bins: those numbered from_step..to_step (0, UINT64_MAX: all) — or, with
 * last_steps, only each rank's newest last_steps of them. */
struct rs_heatmap_window {
    uint64_t from_step, to_step;
    size_t last_steps;
};

/* A memo of jobs' older steps for whole-job heatmaps (query/heatmap_cache.c): per job and metric,
 * each rank's sums in at most 1,024 base bins of a power-of-two width (12 bytes a rank and bin), so
 * that a running job's older steps are read from the store once, not once per answer. Entries use
 * at most `max_bytes` together (the least recently used goes first; a job larger than that is read
 * directly every time). Thread-safe. NULL without memory. */
typedef struct rs_heatmap_cache rs_heatmap_cache;
rs_heatmap_cache *rs_heatmap_cache_new(size_t max_bytes);
void rs_heatmap_cache_free(rs_heatmap_cache *c);

/* Bins the steps of every rank of `job` in window `w` (from_step <= to_step) into at most
 * `columns` (>= 1) columns, as rs_heatmap_json. Each rank's newest steps (w->last_steps, or with
 * 0: RS_HEATMAP_AUTO_RANK_STEPS over the job's ranks, within [RS_HEATMAP_AUTO_MIN_STEPS,
 * RS_HEATMAP_AUTO_MAX_STEPS]) are loaded in full; without last_steps, its older steps in the
 * window come from what the store keeps per step — the step summaries the server stores once a
 * step is settled, and the metrics a summarizing agent measured — one value each, without reading
 * kernels. Adds to the answer "window" ("all" or "last"), "last_steps" (the newest steps loaded per
 * rank), "exact_rank_steps" (binned from that load), "stored_rank_steps" (binned from stored
 * values) and "rank_steps_without_metrics" (older steps with neither, left out: a job whose
 * steps the server has not summarized yet). For the whole job (from_step 0, to_step UINT64_MAX,
 * no last_steps) with a `cache` (NULL: none) the job fits, each rank's newest
 * RS_HEATMAP_AUTO_MIN_STEPS are loaded in full and the older steps come from the cache, in its bins: the
 * columns then begin at multiples of its bin width and span a multiple of it (the first column
 * may hold fewer steps; its first_step says so). Returns 0 with *out set, RS_E_NOT_FOUND (no such
 * job), -ENOMEM, -ETIMEDOUT (the read's deadline) or a storage error. */
int rs_query_heatmap(rs_store_read *r, const char *job, const struct rs_heatmap_window *w,
                     int metric, size_t columns, rs_heatmap_cache *cache, json_t **out);

#endif
