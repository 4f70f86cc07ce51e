/* Inside query/: the heatmap's reading of older steps from what the store keeps per step
 * (heatmap.c) and its cache of them (heatmap_cache.c). */
#ifndef RS_QUERY_HEATMAP_INT_H
#define RS_QUERY_HEATMAP_INT_H

#include "query/heatmap.h"

#include <stdbool.h>
#include <stdint.h>

/* Receives one older step: its metric's value, or has_value false for a step the store holds no
 * value for (neither a summary nor measured metrics). */
typedef void (*rs__heatmap_sink)(void *arg, uint64_t step, uint64_t start_ns, uint64_t value_ns,
                                 bool has_value);

/* Passes rank's steps from..until, in step order, to sink: stored step summaries, and step
 * records measured by their agent where no summary is stored (their step time ends where the
 * next step starts, as query/steps.h takes it). Returns 0 or a storage error / -ENOMEM. */
int rs__heatmap_scan_older(rs_store_read *r, const char *job, uint32_t rank, int metric,
                           uint64_t from, uint64_t until, rs__heatmap_sink sink, void *arg);

/* The lowest step of rank numbered from..until with a step record or summary (*out UINT64_MAX:
 * none). */
int rs__heatmap_first_stored(rs_store_read *r, const char *job, uint32_t rank, uint64_t from,
                             uint64_t until, uint64_t *out);

/* A rank's older step that is not final yet (its value may still be stored): binned for one
 * answer, not kept. */
struct rs__heatmap_extra {
    size_t i; /* the rank's index in the load */
    uint64_t step, start_ns, value_ns;
};

/* The older steps of a job for one answer: per rank and base bin (`width` steps, a power of two,
 * bin k holding steps (first_bin + k) * width ..), the metric's sum and count; then the steps
 * after those that are not final yet. Copied out of the cache: the caller owns it. */
struct rs__heatmap_older {
    uint64_t width, first_bin;
    size_t n_bins, n_ranks;
    double *sum_ms;      /* [i * n_bins + k] */
    uint32_t *count;     /* the same */
    uint64_t *bin_start; /* per bin: the earliest start of a step in it (UINT64_MAX: none) */
    uint64_t lowest;     /* the lowest step held (UINT64_MAX: none) */
    uint64_t stored, without; /* rank-steps with a value; final ones without */
    struct rs__heatmap_extra *extra;
    size_t n_extra;
    /* not final and without a value yet (the server has not stored their summaries): the
     * caller measures them (value_ns unused) */
    struct rs__heatmap_extra *pending;
    size_t n_pending;
};

/* Brings the cache's entry for (job, metric) up to the steps before each rank's loaded ones
 * (ranks[i].steps[0], as rs_query_job_steps_until loaded them for the whole job), reading only
 * what it did not hold yet, and copies it into *out. An entry is rebuilt when the job is another
 * one under the same name (first_ns), its ranks changed, or a rank's loaded steps begin before
 * what it holds. A step without a value is final (left out for good) once it started
 * RS_HEATMAP_FINAL_NS before the newest loaded step. Returns 0, -E2BIG when the job is too large
 * for the cache or every entry is in use, -EAGAIN when its entry was replaced meanwhile (the
 * caller reads directly), -ENOMEM or a storage error. Thread-safe: queries of other jobs do not
 * wait for this one's reads. */
#define RS_HEATMAP_FINAL_NS (120ull * 1000000000ull)
int rs__heatmap_cache_older(rs_heatmap_cache *c, rs_store_read *r, const char *job, int metric,
                            const struct rs_rank_steps *ranks, size_t n_ranks,
                            struct rs__heatmap_older *out);
void rs__heatmap_older_fini(struct rs__heatmap_older *o);

/* Whether a job of n_ranks ranks fits c (rs__heatmap_cache_older would not say -E2BIG). */
bool rs__heatmap_cache_fits(const rs_heatmap_cache *c, size_t n_ranks);

#endif
