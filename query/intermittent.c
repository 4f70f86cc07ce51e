/* Intermittent stragglers (see intermittent.h): per step number every rank against the median of
 * the others at that step, then per rank a test of its slow steps against what spikes explain. */
#include "query/intermittent.h"

#include "query/mixed_steps.h"
#include "query/stats.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MIN_DUTY 0.1
#define MAX_DUTY 0.75
#define SPIKE_ALPHA 1e-3 /* chance, per job, that random spikes name some rank */
#define MIN_SLOW_PER_WINDOW 2
#define MIN_LAST_SHARE 0.5
#define MIN_RUNS 3      /* separate runs of slow steps: not one block (an onset, a recovery) */
#define STEPS_PER_RUN 8 /* at most this many slow steps per run on average */

struct acc {
    size_t steps, slow, slow_last;
    size_t runs;        /* maximal runs of consecutive slow steps */
    uint64_t last_slow; /* the step number of its latest slow step + 1 (0: none yet) */
    size_t *steps_in;   /* steps compared per window, newest first */
    size_t *slow_in;    /* slow steps per window, newest first */
    struct rs_samples tail;
    double lost_ms;
    uint64_t first_slow_step, first_slow_ns;
};

static double
work_ms(const struct rs_step_summary *s)
{
    return (double)(s->compute_ns + s->host_gap_ns) / 1e6;
}

/* The rank's step numbered s, advancing its cursor (steps in step order), or NULL. */
static const struct rs_step_summary *
step_at(const struct rs_rank_steps *rk, size_t *cur, uint64_t s)
{
    while (*cur < rk->n && rk->steps[*cur].step < s)
        (*cur)++;
    return *cur < rk->n && rk->steps[*cur].step == s ? &rk->steps[*cur] : NULL;
}

/* Per step: each rank with the step against the median of the others at that step; steps traced
 * on some ranks only (`mixed`: a capture's) are left out, as the straggler rule leaves them out —
 * a traced step's kernels against untraced peers' host gaps would read as a slow step. */
static int
compare_steps(const struct rs_rank_steps *ranks, size_t n_ranks, uint64_t from, uint64_t to,
              size_t W, size_t n_windows, double tail, const struct rs_mixed_steps *mixed,
              struct acc *a)
{
    size_t *cur = calloc(n_ranks, sizeof *cur), *who = malloc(n_ranks * sizeof *who);
    double *work = malloc(n_ranks * sizeof *work), *sorted = malloc(n_ranks * sizeof *sorted);
    const struct rs_step_summary **st = malloc(n_ranks * sizeof *st);
    int rc = 0;

    if (!cur || !who || !work || !sorted || !st) {
        rc = -ENOMEM;
        goto out;
    }
    for (uint64_t s = from; s <= to && rc == 0; s++) {
        size_t m = 0;
        if (rs_mixed_steps_has(mixed, s))
            continue;
        for (size_t i = 0; i < n_ranks; i++)
            if ((st[m] = step_at(&ranks[i], &cur[i], s))) {
                who[m] = i;
                work[m] = sorted[m] = work_ms(st[m]);
                m++;
            }
        if (m < 2)
            continue;
        rs_quantile(sorted, m, 0.5); /* sorts: one sort serves every rank's "median of others" */
        size_t win = (size_t)((to - s) / W);
        for (size_t k = 0; k < m && rc == 0; k++) {
            struct acc *x = &a[who[k]];
            double ref =
                rs_quantile_sorted_without(sorted, m, rs_lower_bound(sorted, m, work[k]), 0.5);
            if (ref <= 0)
                continue;
            x->steps++;
            if (win < n_windows)
                x->steps_in[win]++;
            if (work[k] / ref - 1.0 < tail)
                continue;
            x->runs += x->last_slow != s; /* the previous step was not slow: a new run */
            x->last_slow = s + 1;
            if (x->slow++ == 0) {
                x->first_slow_step = s;
                x->first_slow_ns = st[k]->start_ns + st[k]->host_gap_ns;
            }
            x->slow_last += st[k]->last_arrivals > 0;
            if (win < n_windows)
                x->slow_in[win]++;
            x->lost_ms += work[k] - ref;
            rc = rs_samples_add(&x->tail, work[k] / ref);
        }
    }
out:
    free(cur);
    free(who);
    free(work);
    free(sorted);
    free(st);
    return rc;
}

/* P(X >= s) for X ~ Binomial(t, q), 0 < q < 1, s <= t: summed from s upward in log space, until
 * the terms (decreasing past the mode) no longer add. */
static double
binomial_tail(size_t s, size_t t, double q)
{
    double lt = lgamma((double)t + 1) - lgamma((double)s + 1) - lgamma((double)(t - s) + 1) +
                (double)s * log(q) + (double)(t - s) * log1p(-q);
    double term = exp(lt), sum = 0;
    for (size_t k = s; k <= t && term > 0; k++) {
        sum += term;
        if (k > (double)t * q && term < sum * 1e-12)
            break;
        term *= (double)(t - k) / (double)(k + 1) * q / (1 - q);
    }
    return sum < 1 ? sum : 1;
}

/* Whether rank i's slow steps are intermittent slowness (intermittent.h), given every rank's:
 * under random spikes every rank's steps are slow at one rate, so given the t slow steps of all
 * ranks, the number that fell on rank i is Binomial(t, its share of the steps compared) — the
 * peers' slow steps are the evidence of that rate, however few the peers. */
static bool
is_intermittent(const struct acc *a, size_t i, size_t n_ranks, size_t slow_all, size_t steps_all,
                unsigned windows_required)
{
    const struct acc *x = &a[i];
    if (x->steps == 0 || x->slow == 0 || steps_all <= x->steps)
        return false;
    double duty = (double)x->slow / (double)x->steps;
    double chance = binomial_tail(x->slow, slow_all, (double)x->steps / (double)steps_all);
    if (duty < MIN_DUTY || duty > MAX_DUTY || chance > SPIKE_ALPHA / (double)n_ranks ||
        (double)x->slow_last < MIN_LAST_SHARE * (double)x->slow)
        return false;
    /* recurring: separate runs, not one block of slow steps (a fault's onset or its recovery
     * inside the steps examined), and in each newest window some slow steps but not mostly */
    if (x->runs < MIN_RUNS || x->runs * STEPS_PER_RUN < x->slow)
        return false;
    for (unsigned w = 0; w < windows_required; w++)
        if (x->slow_in[w] < MIN_SLOW_PER_WINDOW ||
            (double)x->slow_in[w] > MAX_DUTY * (double)x->steps_in[w])
            return false;
    return true;
}

int
rs_intermittent_find(const struct rs_rank_steps *ranks, size_t n_ranks, uint64_t from_step,
                     uint64_t to_step, size_t window_steps, unsigned windows_required, double tail,
                     struct rs_intermittent **out, size_t *n_out)
{
    size_t W = window_steps ? window_steps : 1;
    size_t n_windows = to_step >= from_step ? (size_t)((to_step - from_step) / W) + 1 : 0;
    struct acc *a = calloc(n_ranks ? n_ranks : 1, sizeof *a);
    struct rs_intermittent *v = NULL;
    struct rs_mixed_steps mixed = {0};
    size_t n = 0, slow_all = 0, steps_all = 0;
    int rc = 0;

    *out = NULL;
    *n_out = 0;
    if (!a)
        return -ENOMEM;
    if (n_windows < windows_required)
        goto done;
    for (size_t i = 0; i < n_ranks; i++)
        if (!(a[i].slow_in = calloc(n_windows, sizeof *a[i].slow_in)) ||
            !(a[i].steps_in = calloc(n_windows, sizeof *a[i].steps_in))) {
            rc = -ENOMEM;
            goto done;
        }
    if ((rc = rs_mixed_steps_find(ranks, n_ranks, &mixed)) != 0 ||
        (rc = compare_steps(ranks, n_ranks, from_step, to_step, W, n_windows, tail, &mixed, a)) !=
            0)
        goto done;
    for (size_t i = 0; i < n_ranks; i++) {
        slow_all += a[i].slow;
        steps_all += a[i].steps;
    }
    for (size_t i = 0; i < n_ranks; i++) {
        if (!is_intermittent(a, i, n_ranks, slow_all, steps_all, windows_required))
            continue;
        if (!v && !(v = calloc(n_ranks, sizeof *v))) {
            rc = -ENOMEM;
            goto done;
        }
        struct acc *x = &a[i];
        v[n++] = (struct rs_intermittent){
            .index = i,
            .steps = x->steps,
            .slow_steps = x->slow,
            .duty = (double)x->slow / (double)x->steps,
            .tail_slowdown = rs_median(x->tail.v, x->tail.n),
            .lost_ms = x->lost_ms,
            .last_share = (double)x->slow_last / (double)x->slow,
            .first_slow_step = x->first_slow_step,
            .first_slow_ns = x->first_slow_ns,
        };
    }
done:
    rs_mixed_steps_fini(&mixed);
    for (size_t i = 0; i < n_ranks; i++) {
        free(a[i].slow_in);
        free(a[i].steps_in);
        rs_samples_fini(&a[i].tail);
    }
    free(a);
    if (rc != 0) {
        free(v);
        return rc;
    }
    *out = v;
    *n_out = n;
    return 0;
}
