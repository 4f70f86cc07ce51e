/* Intermittent stragglers (docs/analysis.md "Intermittent"): a rank slow on a recurring share of
 * steps — too few to move its median, which the straggler rule (stragglers.h) compares — told apart
 * from random spikes spread over ranks. Pure function over loaded steps; part of the straggler
 * answer. */
#ifndef RS_QUERY_INTERMITTENT_H
#define RS_QUERY_INTERMITTENT_H

#include "query/steps.h"

#include <stddef.h>
#include <stdint.h>

/* One intermittent rank over the steps examined. */
struct rs_intermittent {
    size_t index;             /* into the ranks passed */
    size_t steps, slow_steps; /* steps compared with peers; those slow */
    double duty;              /* slow_steps / steps */
    double tail_slowdown;     /* median over its slow steps of work / the peers' median work */
    double lost_ms;           /* Σ over slow steps of work − the peers' median work */
    double last_share;        /* share of its slow steps on which it arrived last somewhere */
    uint64_t first_slow_step, first_slow_ns; /* its first slow step, and that step's first kernel */
};

/* Looks for intermittent ranks over steps [from_step, to_step] of ranks[0..n_ranks) (step order
 * within each rank), in windows of window_steps aligned on to_step. Per step number, a rank's work
 * (compute + host gap) is compared with the median of the other ranks' at that step; the step is
 * slow when work / that median − 1 >= tail. A rank is intermittent when
 *   - its duty is in [0.1, 0.75] (above: steadily slow — the straggler rule's case),
 *   - its slow steps are more than random spikes explain: random spikes make every rank's steps
 *     slow at one rate, so of the t slow steps of all ranks, Binomial(t, N / N_all) fall on a
 *     rank with N of the N_all steps compared; the chance of at least its s must be
 *     <= 0.001 / n_ranks (the peers' slow steps are the evidence of the rate, however few: among
 *     2 ranks, 9 of 10 on one is chance 0.011, not enough; 11 against none is),
 *   - recurring: its slow steps form at least 3 separate runs of consecutive steps, at most 8 slow
 *     steps per run on average (one block is a fault's onset or recovery), and each of the newest
 *     `windows_required` windows has at least 2 slow steps, on at most 75% of its steps,
 *   - it arrived last at some collective on at least half of its slow steps (it held the others).
 * Steps traced on some ranks only (mixed_steps.h: a capture's) are not compared, as in the
 * straggler rule. Writes a malloc'ed array (NULL when none) to *out and its length to *n_out.
 * Returns 0 or -ENOMEM (then *out is NULL). Thread-safe (no shared state). */
int rs_intermittent_find(const struct rs_rank_steps *ranks, size_t n_ranks, uint64_t from_step,
                         uint64_t to_step, size_t window_steps, unsigned windows_required,
                         double tail, struct rs_intermittent **out, size_t *n_out);

#endif
