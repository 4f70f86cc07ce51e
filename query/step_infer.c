/* Step inference from the periodic pattern of NCCL collectives (see step_infer.h). */
#include "query/step_infer.h"

#include "query/stats.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MIN_PERIODS 3    /* a period must repeat this often in the data */
#define MATCH_FRAC 0.9   /* share of positions whose collective repeats one period later */
#define GAP_CONTRAST 2.0 /* the step gap vs. every other gap */

static bool
same_kind(const struct rs_collective_record *a, const struct rs_collective_record *b)
{
    return a->op == b->op && a->bytes == b->bytes && a->comm_hash == b->comm_hash;
}

static uint64_t
gap(const struct rs_collective_record *c, size_t i) /* between collective i and i + 1 */
{
    return c[i + 1].start_ns > c[i].end_ns ? c[i + 1].start_ns - c[i].end_ns : 0;
}

/* Whether the collectives repeat with period p. */
static bool
repeats(const struct rs_collective_record *c, size_t n, size_t p)
{
    size_t match = 0;
    for (size_t i = 0; i + p < n; i++)
        match += same_kind(&c[i], &c[i + p]);
    return (double)match >= MATCH_FRAC * (double)(n - p);
}

/* The q-quantile of the gaps of phase k of period p (gaps i = k mod p). */
static double
phase_gap(const struct rs_collective_record *c, size_t n, size_t p, size_t k, double q,
          double *scratch)
{
    size_t m = 0;
    for (size_t i = k; i + 1 < n; i += p)
        scratch[m++] = (double)gap(c, i);
    return rs_quantile(scratch, m, q);
}

/* For period p > 1: the phase whose gaps are all longer than GAP_CONTRAST times every gap of the
 * other phases (its 10th percentile against their 90th, so a rare outlier does not decide); -1
 * when there is none. */
static long
step_gap_phase(const struct rs_collective_record *c, size_t n, size_t p, double *scratch)
{
    double lo_best = 0, hi_other = 0;
    size_t best = 0;

    for (size_t k = 0; k < p; k++) {
        double lo = phase_gap(c, n, p, k, 0.1, scratch);
        if (k == 0 || lo > lo_best) {
            best = k;
            lo_best = lo;
        }
    }
    for (size_t k = 0; k < p; k++) {
        double hi = k == best ? 0 : phase_gap(c, n, p, k, 0.9, scratch);
        hi_other = hi > hi_other ? hi : hi_other;
    }
    return lo_best > 0 && lo_best > GAP_CONTRAST * hi_other ? (long)best : -1;
}

/* Period 1 (one collective per step): gaps regular — the 10th percentile at least half the
 * median. */
static bool
regular_gaps(const struct rs_collective_record *c, size_t n, double *scratch)
{
    for (size_t i = 0; i + 1 < n; i++)
        scratch[i] = (double)gap(c, i);
    double lo = rs_quantile(scratch, n - 1, 0.1), mid = rs_quantile(scratch, n - 1, 0.5);
    return mid > 0 && lo >= 0.5 * mid;
}

int
rs_infer_steps(const struct rs_collective_record *c, size_t n, struct rs_step_record **steps,
               size_t *n_steps, uint32_t *period)
{
    double *scratch = malloc((n ? n : 1) * sizeof *scratch);
    struct rs_step_record *v = NULL;
    size_t p = 0, max_p = n / MIN_PERIODS, m = 0;
    long phase = -1;

    *steps = NULL;
    *n_steps = 0;
    *period = 0;
    if (!scratch)
        return -ENOMEM;
    if (max_p > RS_INFER_MAX_PERIOD)
        max_p = RS_INFER_MAX_PERIOD;
    for (size_t cand = 2; cand <= max_p && phase < 0; cand++)
        if (repeats(c, n, cand) && (phase = step_gap_phase(c, n, cand, scratch)) >= 0)
            p = cand;
    if (phase < 0 && n >= MIN_PERIODS + 1 && repeats(c, n, 1) && regular_gaps(c, n, scratch)) {
        p = 1;
        phase = 0;
    }
    if (phase < 0)
        goto out;
    /* collectives of the first one's (comm, op) per period: its seq advances by that per step */
    size_t first = (size_t)phase + 1, per = 0;
    for (size_t i = first; i < first + p && i < n; i++)
        per += c[i].op == c[first % n].op && c[i].comm_hash == c[first % n].comm_hash;
    if (!(v = malloc((n / p + 1) * sizeof *v))) {
        free(scratch);
        return -ENOMEM;
    }
    /* step boundaries: the ends of the collectives before the step gaps (i = phase mod p) */
    for (size_t i = (size_t)phase; i + p < n; i += p) {
        const struct rs_collective_record *a = &c[i + 1]; /* the step's first collective */
        uint64_t end = c[i + p].end_ns;
        if (end <= c[i].end_ns)
            continue;
        v[m++] = (struct rs_step_record){
            .step = a->seq / (per ? per : 1), .start_ns = c[i].end_ns, .end_ns = end};
    }
    *period = (uint32_t)p;
out:
    free(scratch);
    *steps = v;
    *n_steps = m;
    return 0;
}
