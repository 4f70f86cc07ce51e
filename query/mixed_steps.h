/* Steps traced on some ranks only (docs/analysis.md "Steps traced on some ranks"): at a step number
 * where some ranks ran traced compute kernels and others none — a capture traces chosen ranks for a
 * few seconds; a rank's collector may be off; a kernel window may open between two ranks' steps —
 * their compute cannot be compared: an untraced step shows no compute and a host gap up to its
 * first NCCL operation (the plugin's, or none: the whole step; common/step_metrics.h), a traced one
 * its kernels. The straggler rule leaves such steps out of its per-step comparisons (every rank's,
 * so that all compare the same steps); the steps where every rank, or none, traced compute are
 * compared as they are. A step "traced" here has compute_ns > 0 (non-NCCL kernels). Pure functions;
 * not thread-safe per object. */
#ifndef RS_QUERY_MIXED_STEPS_H
#define RS_QUERY_MIXED_STEPS_H

#include "query/steps.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rs_mixed_steps {
    uint64_t lo; /* the step number of mixed[0] */
    size_t n;    /* step numbers covered: [lo, lo + n); others count as not mixed */
    bool *mixed; /* some ranks having the step with compute, some without */
    size_t n_mixed;
};

/* Finds the mixed steps of `ranks` (each in step order) into *out. The range covered is that of
 * the ranks' steps, at most RS_MIXED_STEPS_MAX_SPAN step numbers below the newest (ranks numbered
 * far apart: the oldest are left out, counted as not mixed). Returns 0 or -ENOMEM (*out then
 * empty). */
#define RS_MIXED_STEPS_MAX_SPAN (1u << 20)
int rs_mixed_steps_find(const struct rs_rank_steps *ranks, size_t n_ranks,
                        struct rs_mixed_steps *out);

/* Whether step number `step` is mixed. */
bool rs_mixed_steps_has(const struct rs_mixed_steps *m, uint64_t step);

/* Releases what rs_mixed_steps_find allocated; idempotent. */
void rs_mixed_steps_fini(struct rs_mixed_steps *m);

#endif
