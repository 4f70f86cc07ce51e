/* Steps traced on some ranks only (see mixed_steps.h): a count per step number of the ranks that
 * have the step and of those that ran compute kernels in it. */
#include "query/mixed_steps.h"

#include <errno.h>
#include <stdlib.h>

int
rs_mixed_steps_find(const struct rs_rank_steps *ranks, size_t n_ranks, struct rs_mixed_steps *out)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    uint32_t *have = NULL, *traced = NULL;
    int rc = 0;

    *out = (struct rs_mixed_steps){0, 0, NULL, 0};
    for (size_t i = 0; i < n_ranks; i++) {
        if (ranks[i].n == 0)
            continue;
        lo = ranks[i].steps[0].step < lo ? ranks[i].steps[0].step : lo;
        hi = ranks[i].steps[ranks[i].n - 1].step > hi ? ranks[i].steps[ranks[i].n - 1].step : hi;
    }
    if (lo > hi)
        return 0;
    if (hi - lo >= RS_MIXED_STEPS_MAX_SPAN)
        lo = hi - RS_MIXED_STEPS_MAX_SPAN + 1;
    size_t n = (size_t)(hi - lo + 1);
    if (!(have = calloc(n, sizeof *have)) || !(traced = calloc(n, sizeof *traced)) ||
        !(out->mixed = calloc(n, sizeof *out->mixed))) {
        rc = -ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < n_ranks; i++)
        for (size_t k = 0; k < ranks[i].n; k++) {
            const struct rs_step_summary *s = &ranks[i].steps[k];
            if (s->step < lo)
                continue;
            have[s->step - lo]++;
            traced[s->step - lo] += s->compute_ns > 0;
        }
    for (size_t k = 0; k < n; k++) {
        out->mixed[k] = traced[k] > 0 && traced[k] < have[k];
        out->n_mixed += out->mixed[k];
    }
    out->lo = lo;
    out->n = n;
done:
    free(have);
    free(traced);
    if (rc != 0)
        rs_mixed_steps_fini(out);
    return rc;
}

bool
rs_mixed_steps_has(const struct rs_mixed_steps *m, uint64_t step)
{
    return m->mixed && step >= m->lo && step - m->lo < m->n && m->mixed[step - m->lo];
}

void
rs_mixed_steps_fini(struct rs_mixed_steps *m)
{
    free(m->mixed);
    *m = (struct rs_mixed_steps){0, 0, NULL, 0};
}
