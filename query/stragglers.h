/* Stragglers (docs/analysis.md "Straggler"), batch evaluation over the job's most recent windows of
 * `window_steps` steps, or of 60 s when that is fewer steps (aligned by step number, newest
 * first). Per window and rank:
 *   slowdown_r  = median over steps of (compute + host_gap) / median over the other ranks of the
 *                 same (not over all ranks: for 2 ranks that median is their mean and
 *                 would halve the slowdown, so peers are used — the same for many ranks)
 *   last_frac_r = fraction of the window's collective instances where r arrived last
 * A rank is a straggler when slowdown - 1 >= threshold and last_frac >= min_last_frac in each of
 * the newest `windows_required` windows. Each verdict carries: impact — job time lost, i.e. the
 * rank's per-step excess of compute + host gap over the median rank, times the steps of the run
 * (the job runs at its pace), and that as % of wall time — and peer_wait_s, the sum over
 * the instances where it arrived last of the median wait of the other ranks (it counts every
 * gradient bucket, so it exceeds the time lost);
 * cause (gpu_slow / extra_work / host_side, or unknown) with evidence, since (start of the oldest
 * window of the unbroken run that meets the rule: window-granular), the onset within it (per step:
 * see onset below), confidence, NVRx-style relative and individual scores, and a recommended action
 * (observe, drain-candidate). Needs steps (records, or inferred from NCCL).
 *
 * Every figure names its window: the answer's "window" is the newest window (steps, time span),
 * over which slowdown and last_frac are measured; each verdict carries the collective instances of
 * its rank in that window, and "impact_window", the steps its impact covers.
 *
 * Onset: over the steps of the oldest window of the run and of the window before it (when the
 * lookback has one), each step of the rank is slow when its compute + host gap is >= threshold
 * above the median of its peers' at the same step number; the onset is the step that splits them
 * into "before" and "from then on slow" with the fewest steps on the wrong side of the split (the
 * earliest such step). It is not earlier than the first step searched: when the run reaches back to
 * the oldest window examined, the fault may have begun before ("onset.before_search" is true). */
#ifndef RS_QUERY_STRAGGLERS_H
#define RS_QUERY_STRAGGLERS_H

#include "query/steps.h"
#include "storage/store.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct rs_straggler_options {
    size_t window_steps;       /* 30 */
    double window_s;           /* 60: fewer steps when 30 steps take longer (docs/analysis.md: "the
                                  last 30 steps or 60 s"), at least 4; 0 = window_steps as is */
    unsigned windows_required; /* 2 */
    double threshold;          /* 0.03 */
    double min_last_frac;      /* 0.5 */
    unsigned lookback_windows; /* windows examined for `since`: 10 */
    uint64_t until_step;       /* evaluate the windows ending at this step (a past verdict);
                                  UINT64_MAX = the newest */
    bool fit_short;            /* false; true: when the rank with the fewest steps has fewer than
                                  windows_required windows of them, windows of its steps divided by
                                  windows_required (at least 4) — a short trace — and say so */
};

/* Fills the defaults above. */
void rs_straggler_options_default(struct rs_straggler_options *o);

/* The verdicts for `job` as JSON (opts NULL = the defaults) (docs/openapi.yaml,
 * /v1/jobs/{job}/stragglers). Returns 0, RS_E_NOT_FOUND, or a storage error. A job without enough
 * steps gets an empty verdict list, "enough_data": false and a summary saying why. */
int rs_query_stragglers(rs_store_read *r, const char *job, const struct rs_straggler_options *o,
                        json_t **out);

/* Steps each rank needs for the rule with options `o`: the lookback windows. */
size_t rs_straggler_steps_needed(const struct rs_straggler_options *o);

/* rs_query_stragglers over steps the caller loaded already with
 * rs_query_job_steps_until(r, job, rs_straggler_steps_needed(o), o->until_step, ...) — for a
 * caller that needs those steps too (the server's evaluator stores their summaries). `ranks` is
 * borrowed. */
int rs_query_stragglers_on(rs_store_read *r, const char *job, const struct rs_straggler_options *o,
                           struct rs_rank_steps *ranks, size_t n_ranks, json_t **out);

#endif
