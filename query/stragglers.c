/* The straggler rule with cause and impact (see stragglers.h). */
#include "query/stragglers.h"

#include "common/array.h"
#include "common/error.h"
#include "common/hash.h"
#include "query/intermittent.h"
#include "query/mixed_steps.h"
#include "query/profile.h"
#include "query/stats.h"
#include "query/stragglers_int.h"
#include "query/steps.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EVIDENCE RS_STRAGGLER_MAX_EVIDENCE
#define CAUSE_PEERS 16 /* peers whose kernels are compared with a straggler's */
/* The robust reference and the evidence near the threshold (docs/analysis.md "The rule"). */
#define MAD_SIGMA 1.4826   /* MAD x this = the standard deviation, for normal noise */
#define OUTLIER_SIGMAS 3.0 /* a rank this many spreads above the median is no one's reference */
#define SEPARATED 3.0      /* spreads above its reference: a rank apart from the noise (at least) */
#define NEAR 0.4           /* x threshold: named with strong arrival evidence */
#define SUSPECT 0.25       /* x threshold: the least slowdown of a suspect */
#define TWO_RANKS_APART 0.6 /* x threshold: "separated" among 2 ranks */
#define STRONG 0.8 /* share of last arrivals (or of the waits, x ranks late) that is strong */
#define INTERMITTENT_TAIL 2.0 /* x threshold: a step this much slower is a slow step */
#define RISE_Z 4.0 /* standard errors: a rise of a rank's work over its only peer apart from noise */
#define MEDIAN_SE 1.2533 /* the standard error of a median over that of a mean, normal noise */
#define KERNEL_SE 0.25   /* x threshold: the largest standard error of a kernel speed named on */

void
rs_straggler_options_default(struct rs_straggler_options *o)
{
    *o = (struct rs_straggler_options){
        30, 60.0, 2, 0.03, 0.5, 10, UINT64_MAX, false, RS_STRAGGLER_CAUSE_GPU_SLOW, 5.0};
}

const char *
rs_straggler_cause_name(enum rs_straggler_cause c)
{
    switch (c) {
    case RS_STRAGGLER_CAUSE_GPU_SLOW:
        return "gpu_slow";
    case RS_STRAGGLER_CAUSE_EXTRA_WORK:
        return "extra_work";
    case RS_STRAGGLER_CAUSE_HOST_SIDE:
        return "host_side";
    case RS_STRAGGLER_CAUSE_UNKNOWN:
        break;
    }
    return "unknown";
}

const char *
rs_straggler_action_name(enum rs_straggler_action a)
{
    switch (a) {
    case RS_STRAGGLER_ACTION_OBSERVE:
        return "observe";
    case RS_STRAGGLER_ACTION_DRAIN_CANDIDATE:
        return "drain-candidate";
    case RS_STRAGGLER_ACTION_NONE:
        break;
    }
    return "none";
}

const char *
rs_straggler_kind_name(enum rs_straggler_kind k)
{
    return k == RS_STRAGGLER_KIND_INTERMITTENT ? "intermittent" : "straggler";
}

const char *
rs_straggler_window_choice_name(enum rs_straggler_window_choice w)
{
    switch (w) {
    case RS_STRAGGLER_WINDOW_TIME:
        return "time";
    case RS_STRAGGLER_WINDOW_GIVEN:
        return "given";
    case RS_STRAGGLER_WINDOW_SHORT_JOB:
        return "short_job";
    case RS_STRAGGLER_WINDOW_DEFAULT:
        break;
    }
    return "default";
}

/* The action policy (the options' drain_*): the one place that decides it. */
static enum rs_straggler_action
verdict_action(const struct rs_straggler_options *o, enum rs_straggler_cause cause,
               double impact_pct)
{
    return cause == o->drain_cause && impact_pct >= o->drain_min_impact_pct
               ? RS_STRAGGLER_ACTION_DRAIN_CANDIDATE
               : RS_STRAGGLER_ACTION_OBSERVE;
}

struct rank_window {
    size_t steps;
    double work_ms;     /* median of compute + host gap */
    double peers_ms;    /* its reference: the median work_ms of its peers (rank_references) */
    double host_gap_ms; /* median host gap */
    double comm_ms;     /* median NCCL time: a late rank waits less in its collectives */
    /* its steps in the window are all traced on some ranks only and it traced compute in most
     * (mixed_steps.h: a capture covers the window): compared with such ranks only */
    bool traced_alone;
    uint64_t instances; /* collective instances (across ranks) that started in its steps */
    uint64_t last;      /* instances it arrived last at */
    double impact_ns;   /* others' median wait at those instances */
    /* the rule's figures, computed once (build_windows) */
    double slowdown;   /* work_ms / peers_ms (1 without peers' time) */
    double last_frac;  /* last / instances (0 without instances) */
    double wait_share; /* impact_ns / the window's sum of every rank's impact_ns */
    double separation; /* (work_ms − peers_ms) / the ranks' robust spread; -1: spread 0 */
    double late_ratio; /* (NCCL time of the ranks not slow − comm_ms) / (work_ms − peers_ms) */
    bool separated;    /* apart from the noise (rank_references) */
    double kernel_ratio; /* its kernel speed (kernel_pass; 0: not measured) */
    double kernel_se;    /* its standard error */
    bool by_kernels;     /* meets the rule on its kernel speed (kernel_pass) */
    bool evidence;       /* arrival evidence (own, or shared with ranks late together) */
    bool strong;         /* strong arrival evidence, and separated */
    bool qualifies;      /* meets the rule in this window */
};

struct window {
    uint64_t first_step, t0, t1; /* steps (first_step, ...], time [t0, t1) */
    struct rank_window *r;       /* per rank index */
};

/* Among 2 ranks: where a rank's work over its peer's rose, from the steps loaded (rise_find). */
struct rise {
    bool known;    /* a rise of at least NEAR x threshold, RISE_Z standard errors */
    uint64_t step; /* the first step after it */
    double size;   /* median ratio after / median ratio before − 1 */
    double z;      /* size in standard errors of the difference of the two medians */
};

struct ctx {
    const struct rs_straggler_options *o;
    size_t W;      /* steps per window: o->window_steps, or fewer for 60 s or a short job */
    size_t fewest; /* steps of the rank with the fewest (fit_short) */
    bool fitted;   /* W fitted to a short job (fit_short) */
    struct rs_rank_steps *ranks;
    size_t n_ranks;
    struct window *w;
    size_t n_w;
    struct rise *rise; /* per rank index, 2 ranks only (rise_find); NULL otherwise */
    /* steps traced on some ranks only (a capture's): left out of the comparisons, or compared
     * among the ranks traced likewise (mixed_steps.h, rank_window.traced_alone) */
    struct rs_mixed_steps mixed;
};

static uint64_t
step_key(const void *p)
{
    return ((const struct rs_step_summary *)p)->step;
}

/* Fills rw from the rank's steps numbered (hi - W, hi] (steps are in step order); scratch and mine
 * hold W entries. */
static void
rank_window_fill(const struct rs_rank_steps *rk, const struct rs_mixed_steps *mx, uint64_t hi,
                 size_t W, struct rank_window *rw, double *scratch,
                 const struct rs_step_summary **mine, uint64_t *t0, uint64_t *t1)
{
    uint64_t lo_step = hi + 1 >= W ? hi + 1 - W : 0;
    size_t first = rs_lower_bound_by(rk->steps, rk->n, sizeof *rk->steps, step_key, lo_step);
    size_t end = first;
    while (end < rk->n && rk->steps[end].step <= hi)
        end++;
    rw->steps = end - first;
    for (size_t k = first; k < end; k++) {
        const struct rs_step_summary *s = &rk->steps[k];
        *t0 = s->start_ns < *t0 ? s->start_ns : *t0;
        *t1 = s->end_ns > *t1 ? s->end_ns : *t1;
        rw->instances += s->instances;
        rw->last += s->last_arrivals;
        rw->impact_ns += (double)s->peer_wait_ns;
    }
    /* the two medians the rule and the cause use: compute + host gap, and host gap — over the
     * steps every rank or none traced (a capture's are left out: mixed_steps.h); when the window
     * has no other, over all (traced_alone: compared with the ranks traced likewise) */
    size_t n = 0, traced = 0;
    for (size_t pass = 0; pass < 2 && n == 0; pass++)
        for (size_t k = first; k < end; k++)
            if (pass || !rs_mixed_steps_has(mx, rk->steps[k].step)) {
                mine[n++] = &rk->steps[k];
                traced += pass && rk->steps[k].compute_ns > 0;
            }
    rw->traced_alone = 2 * traced > n;
    for (size_t k = 0; k < n; k++)
        scratch[k] = (double)(mine[k]->compute_ns + mine[k]->host_gap_ns) / 1e6;
    rw->work_ms = rs_median(scratch, n);
    for (size_t k = 0; k < n; k++)
        scratch[k] = (double)mine[k]->host_gap_ns / 1e6;
    rw->host_gap_ms = rs_median(scratch, n);
    for (size_t k = 0; k < n; k++)
        scratch[k] = (double)mine[k]->comm_ns / 1e6;
    rw->comm_ms = rs_median(scratch, n);
}

/* Steps per window: window_steps, or fewer when that many steps take longer than window_s (the
 * median step time of the newest steps of all ranks decides), but at least 4. */
static size_t
window_for_time(const struct ctx *c)
{
    struct rs_samples t = {NULL, 0, 0};
    size_t W = c->o->window_steps;

    if (c->o->window_s <= 0)
        return W;
    for (size_t i = 0; i < c->n_ranks; i++)
        for (size_t k = c->ranks[i].n > W ? c->ranks[i].n - W : 0; k < c->ranks[i].n; k++)
            rs_samples_add(&t, (double)c->ranks[i].steps[k].step_ns / 1e9);
    double step_s = t.n ? rs_median(t.v, t.n) : 0;
    rs_samples_fini(&t);
    if (step_s > 0 && step_s * (double)W > c->o->window_s)
        W = (size_t)(c->o->window_s / step_s);
    return W < 4 ? 4 : W;
}

/* fit_short: a job whose rank with the fewest steps has fewer than windows_required windows of W
 * steps (a short imported trace) gets windows of its steps / windows_required, at least 4 — what
 * `rankscope analyze` does — instead of "not enough data". */
static void
fit_to_short_job(struct ctx *c)
{
    size_t fewest = SIZE_MAX, need = c->o->windows_required ? c->o->windows_required : 1;

    for (size_t i = 0; i < c->n_ranks; i++)
        fewest = c->ranks[i].n < fewest ? c->ranks[i].n : fewest;
    c->fewest = c->n_ranks ? fewest : 0;
    if (!c->o->fit_short || c->n_ranks == 0 || fewest >= need * c->W)
        return;
    c->W = fewest / need < 4 ? 4 : fewest / need;
    c->fitted = true;
}

static const struct rs_step_summary *
step_of(const struct rs_rank_steps *rk, uint64_t step)
{
    size_t i = rs_lower_bound_by(rk->steps, rk->n, sizeof *rk->steps, step_key, step);
    return i < rk->n && rk->steps[i].step == step ? &rk->steps[i] : NULL;
}

static double
work_ms(const struct rs_step_summary *s)
{
    return (double)(s->compute_ns + s->host_gap_ns) / 1e6;
}

/* Among 2 ranks, window w of rank i lies after a rise of its work over its peer's (rise_find): most
 * of its steps are at or after the rise's step. */
static bool
after_rise(const struct ctx *c, const struct window *w, size_t i)
{
    return c->rise && c->rise[i].known && w->first_step + c->W / 2 >= c->rise[i].step;
}

/* Among 2 ranks the slower one is last almost everywhere whatever the reason, and a pair of healthy
 * GPUs differs by up to ~1.6% for good (ddp_tracegen's fault-free pairs; docs/analysis.md "The
 * rule"), so the slowdown against the one peer cannot tell a GPU that became 3% slower (measured
 * 0.6 – 2.6% under interference) from the pair's spread. Its rise can: the ratio of rank idx's work
 * to its peer's, step by step over the steps both have, split where the rise is the most standard
 * errors (medians of at least min_seg steps each side; the noise from successive differences,
 * which one step change barely moves). out->known when the rise is ≥ NEAR x threshold and
 * ≥ RISE_Z standard errors. O(n x min(n, 256)) for n steps. Returns 0 or -ENOMEM. */
static int
rise_find(const struct ctx *c, size_t idx, size_t min_seg, struct rise *out)
{
    const struct rs_rank_steps *me = &c->ranks[idx], *peer = &c->ranks[1 - idx];
    size_t n = 0, cap = me->n ? me->n : 1;
    double *q = malloc(cap * sizeof *q), *s = malloc(cap * sizeof *s);
    uint64_t *steps = malloc(cap * sizeof *steps);
    int rc = 0;

    *out = (struct rise){0};
    if (!q || !s || !steps) {
        rc = -ENOMEM;
        goto done;
    }
    for (size_t k = 0; k < me->n; k++) {
        const struct rs_step_summary *p = step_of(peer, me->steps[k].step);
        double mine = work_ms(&me->steps[k]), theirs = p ? work_ms(p) : 0;
        if (rs_mixed_steps_has(&c->mixed, me->steps[k].step))
            continue; /* traced on one of the two only: not comparable (mixed_steps.h) */
        if (mine > 0 && theirs > 0) {
            q[n] = mine / theirs;
            steps[n++] = me->steps[k].step;
        }
    }
    if (min_seg < 2 || n < 2 * min_seg)
        goto done;
    for (size_t k = 0; k + 1 < n; k++)
        s[k] = fabs(q[k + 1] - q[k]);
    double sigma = MAD_SIGMA * rs_median(s, n - 1) / sqrt(2.0); /* one step's noise */
    /* at most ~256 splits, each O(n): a window of 10,000 steps stays linear, the split within
     * n / 256 < W / 20 steps (n ≤ (lookback_windows + 1) x W) */
    for (size_t k = min_seg; k + min_seg <= n; k += 1 + n / 256) {
        memcpy(s, q, k * sizeof *s);
        double before = rs_median(s, k);
        memcpy(s, q + k, (n - k) * sizeof *s);
        double after = rs_median(s, n - k);
        if (before <= 0)
            continue;
        double se = MEDIAN_SE * sigma * sqrt(1.0 / (double)k + 1.0 / (double)(n - k)) / before;
        double size = after / before - 1.0;
        double z = se > 0 ? size / se : size > 0 ? HUGE_VAL : 0;
        if (z > out->z)
            *out = (struct rise){false, steps[k], size, z};
    }
    out->known = out->z >= RISE_Z && out->size >= NEAR * c->o->threshold;
done:
    free(q);
    free(s);
    free(steps);
    return rc;
}

/* Each rank's reference in window w: the median work of its peers that are not outliers themselves
 * (more than OUTLIER_SIGMAS robust spreads, or threshold / 2, above the median of all ranks), so
 * that several slow ranks do not raise each other's reference; the median of all other ranks when
 * fewer than 2 ranks remain (2 ranks: the other one — against the median of all, their mean, a 5%
 * slower GPU among 2 ranks measured 1.0 – 2.5% and went unseen). The ranks are the n of ids
 * (those compared with each other: traced_alone); refs holds their work_ms; devs is scratch of n.
 * A rank with no peer among them has slowdown 1. */
static void
rank_references(const struct ctx *c, struct window *w, const size_t *ids, size_t n, double *refs,
                double *devs)
{
    double m = rs_quantile(refs, n, 0.5); /* sorts refs */
    for (size_t i = 0; i < n; i++)
        devs[i] = refs[i] > m ? refs[i] - m : m - refs[i];
    double sigma = MAD_SIGMA * rs_median(devs, n);
    /* the noise's largest of n ranks is about sqrt(2 ln n) spreads above the median (3.7 at
     * 1,024 ranks): apart from the noise is a spread above that, at least SEPARATED */
    double apart = sqrt(2 * log((double)n)) + 1;
    apart = apart > SEPARATED ? apart : SEPARATED;
    double cut =
        m + (OUTLIER_SIGMAS * sigma > 0.5 * c->o->threshold * m ? OUTLIER_SIGMAS * sigma
                                                                : 0.5 * c->o->threshold * m);
    size_t clean = rs_lower_bound(refs, n, nextafter(cut, 1e300)); /* refs[0 .. clean) <= cut */

    for (size_t x = 0; x < n; x++) {
        size_t i = ids[x];
        struct rank_window *rw = &w->r[i];
        bool inside = rw->work_ms <= cut;
        if (n < 2)
            rw->peers_ms = 0; /* no peer compared likewise */
        else if (clean >= (size_t)(2 + inside))
            rw->peers_ms = inside ? rs_quantile_sorted_without(
                                        refs, clean, rs_lower_bound(refs, clean, rw->work_ms), 0.5)
                                  : rs_quantile(refs, clean, 0.5);
        else
            rw->peers_ms =
                rs_quantile_sorted_without(refs, n, rs_lower_bound(refs, n, rw->work_ms), 0.5);
        rw->slowdown = rw->peers_ms > 0 ? rw->work_ms / rw->peers_ms : 1.0;
        rw->last_frac = rw->instances ? (double)rw->last / (double)rw->instances : 0;
        rw->separation = sigma > 0 ? (rw->work_ms - rw->peers_ms) / sigma : -1;
        /* 2 ranks have no robust spread: apart from the noise is 0.6 x threshold above the other
         * (2.6 standard deviations of the difference of two GPUs 0.5% apart, ddp_tracegen's), or
         * a window after a rise over the other (after_rise) */
        rw->separated = n <= 2      ? rw->slowdown - 1.0 >= TWO_RANKS_APART * c->o->threshold ||
                                     after_rise(c, w, i)
                        : sigma > 0 ? rw->separation >= apart
                                    : rw->work_ms > rw->peers_ms;
    }
}

/* The arrival evidence of each rank in window w, and whether it meets the rule there
 * (docs/analysis.md "The rule"). scratch: n_ranks doubles. */
static void
rank_evidence(const struct ctx *c, struct window *w, double *scratch)
{
    const double thr = c->o->threshold, mlf = c->o->min_last_frac;
    double waits = 0, group = 0, max_other = 0;
    size_t slow = 0, near = 0, n_ok = 0;

    for (size_t i = 0; i < c->n_ranks; i++) {
        waits += w->r[i].impact_ns;
        slow += w->r[i].slowdown - 1.0 >= thr;
        near += w->r[i].slowdown - 1.0 >= NEAR * thr;
        if (w->r[i].slowdown - 1.0 < thr)
            scratch[n_ok++] = w->r[i].comm_ms;
    }
    /* the NCCL time of a rank that is not slow: it waits for the late ones in its collectives */
    double comm_ok = rs_median(scratch, n_ok);
    /* The share of the others' waiting each rank caused: collectives launched back to back after
     * the same compute show the late rank only at the first of them — the rest start together
     * and cost nobody a wait — so a count of last arrivals hides it and the wait it caused does
     * not; ranks late together split it. */
    for (size_t i = 0; i < c->n_ranks; i++) {
        struct rank_window *rw = &w->r[i];
        rw->wait_share = waits > 0 ? rw->impact_ns / waits : 0;
        if (rw->slowdown - 1.0 >= thr)
            group += rw->wait_share;
        else if (rw->wait_share > max_other)
            max_other = rw->wait_share;
    }
    for (size_t i = 0; i < c->n_ranks; i++) {
        struct rank_window *rw = &w->r[i];
        bool above = rw->slowdown - 1.0 >= thr;
        bool own = rw->last_frac >= mlf || rw->wait_share >= mlf / (double)(slow > 1 ? slow : 1);
        /* ranks late together: the latest of them hides the others (their arrivals are not last
         * though they are late); the group caused most of the waiting, and each of its ranks
         * caused more than any rank that is not slow, or waited in its collectives less than
         * those by at least half its excess work (it arrived late, clock-free) */
        double excess = rw->work_ms - rw->peers_ms;
        rw->late_ratio = n_ok > 0 && excess > 0 ? (comm_ok - rw->comm_ms) / excess : 0;
        bool late = n_ok > 0 && comm_ok - rw->comm_ms >= 0.5 * excess;
        bool shared = above && slow >= 2 && group >= mlf && (rw->wait_share > max_other || late) &&
                      rw->separated;
        rw->evidence = own || shared;
        rw->strong = rw->separated && (rw->last_frac >= STRONG ||
                                       rw->wait_share >= STRONG / (double)(near > 1 ? near : 1));
        /* among 2 ranks, a rise over the other since a step inside the steps loaded measures the
         * slowdown without the pair's own constant spread (after_rise); without one, a slowdown
         * below the threshold is that spread as much as a fault — the slower of two is last
         * almost everywhere whatever the reason, so its strong evidence adds nothing (a
         * fault-free pair of ddp_tracegen, seed 53, GPUs built 1.84% apart, measured 1.86% with
         * wait share 0.98): a suspect, not a verdict */
        bool risen = after_rise(c, w, i) && rw->slowdown > 1.0;
        bool close = c->n_ranks > 2 && rw->slowdown - 1.0 >= NEAR * thr;
        rw->qualifies = (above && rw->evidence) || ((close || risen) && rw->strong);
    }
}

/* Builds windows of W steps aligned on the newest step all ranks have. */
static int
build_windows(struct ctx *c)
{
    const size_t W = c->W;
    uint64_t end = UINT64_MAX;
    double *scratch = NULL, *refs = NULL, *devs = NULL;
    const struct rs_step_summary **mine = NULL;
    size_t *ids = NULL;
    int rc = 0;

    for (size_t i = 0; i < c->n_ranks; i++) {
        if (c->ranks[i].n == 0)
            return 0;
        uint64_t last = c->ranks[i].steps[c->ranks[i].n - 1].step;
        if (last < end)
            end = last;
    }
    if (!(c->w = calloc(c->o->lookback_windows, sizeof *c->w)) ||
        !(scratch = malloc(W * sizeof *scratch)) || !(mine = malloc(W * sizeof *mine)) ||
        !(refs = malloc(c->n_ranks * sizeof *refs)) || !(ids = malloc(c->n_ranks * sizeof *ids)) ||
        !(devs = malloc(c->n_ranks * sizeof *devs))) {
        rc = -ENOMEM;
        goto out;
    }
    if (c->n_ranks == 2) { /* segments of a quarter window: the rise must hold for some steps */
        if (!(c->rise = calloc(2, sizeof *c->rise))) {
            rc = -ENOMEM;
            goto out;
        }
        for (size_t i = 0; i < 2; i++)
            if ((rc = rise_find(c, i, W / 4 < 4 ? 4 : W / 4, &c->rise[i])) != 0)
                goto out;
    }
    for (size_t j = 0; j < c->o->lookback_windows && end + 1 >= (j + 1) * W; j++) {
        struct window *w = &c->w[j];
        uint64_t hi = end - j * W;
        bool complete = true;
        w->first_step = hi + 1 - W;
        w->t0 = UINT64_MAX;
        if (!(w->r = calloc(c->n_ranks, sizeof *w->r))) {
            rc = -ENOMEM;
            goto out;
        }
        for (size_t i = 0; i < c->n_ranks && complete; i++) {
            rank_window_fill(&c->ranks[i], &c->mixed, hi, W, &w->r[i], scratch, mine, &w->t0,
                             &w->t1);
            complete = w->r[i].steps >= W / 2;
        }
        if (!complete) { /* a window some rank barely covers ends the lookback */
            free(w->r);
            w->r = NULL;
            break;
        }
        /* ranks whose window a capture covers are compared with each other, the rest likewise */
        for (int alone = 0; alone < 2; alone++) {
            size_t n = 0;
            for (size_t i = 0; i < c->n_ranks; i++)
                if (w->r[i].traced_alone == alone) {
                    ids[n] = i;
                    refs[n++] = w->r[i].work_ms;
                }
            if (n)
                rank_references(c, w, ids, n, refs, devs);
        }
        rank_evidence(c, w, devs);
        c->n_w = j + 1;
    }
out:
    free(scratch);
    free(mine);
    free(ids);
    free(refs);
    free(devs);
    return rc;
}

static uint64_t
min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

struct evidence {
    const char *name;
    double ratio, extra_ms_per_step;
};

static void
kernel_evidence_clear(struct rs_straggler_verdict *v)
{
    for (size_t e = 0; e < v->n_kernels; e++)
        free(v->kernels[e].kernel);
    v->n_kernels = 0;
}

/* Compares rank `idx` with its peers, kernel name by kernel name, in window 0: time lost to the
 * same kernels running slower (gpu_slow), and time in kernels the peers do not run as often
 * (extra_work), in ms per step; the top kernels of the larger one as evidence. */
/* Who a rank is, and when its records are (from one scan of the ranks). */
struct identity {
    uint32_t rank;
    char host[RS_STORE_HOST_MAX], gpu[RS_STORE_UUID_MAX];
    uint64_t first_ns, last_ns;
};

struct identities {
    struct identity *v; /* rank order */
    size_t n, cap;
};

static int
on_rank_info(void *arg, const struct rs_rank_info *info)
{
    struct identities *ids = arg;
    if (RS_ARRAY_RESERVE(ids->v, ids->cap, ids->n, 1) != 0)
        return -ENOMEM;
    struct identity *v = ids->v;
    v[ids->n].rank = info->rank;
    snprintf(v[ids->n].host, sizeof v[ids->n].host, "%s", info->host);
    snprintf(v[ids->n].gpu, sizeof v[ids->n].gpu, "%s", info->gpu_uuid);
    v[ids->n].first_ns = info->first_ns;
    v[ids->n].last_ns = info->last_ns;
    ids->n++;
    return 0;
}

/* The identity of `rank` (binary search: rank order), or NULL. */
static uint64_t
identity_key(const void *p)
{
    return ((const struct identity *)p)->rank;
}

static const struct identity *
find_identity(const struct identities *ids, uint32_t rank)
{
    size_t i = rs_lower_bound_by(ids->v, ids->n, sizeof *ids->v, identity_key, rank);
    return i < ids->n && ids->v[i].rank == rank ? &ids->v[i] : NULL;
}

/* Rank i's kernels by name in window j into ns (zeroed by the caller), with their durations when
 * `durations` (rs__kernel_speed). Returns 0, -ENOMEM or a storage error. */
static int
window_knames(const struct ctx *c, rs_store_read *r, const char *job, size_t j, size_t i,
              const struct identities *ids, bool durations, struct rs__knames *ns)
{
    const struct identity *id = find_identity(ids, c->ranks[i].rank);

    ns->t0 = c->w[j].t0;
    ns->t1 = c->w[j].t1;
    ns->first_ns = id ? id->first_ns : 0; /* unknown: anywhere */
    ns->last_ns = id && id->last_ns > id->first_ns ? id->last_ns : UINT64_MAX;
    ns->durations = durations;
    return rs__knames_scan(r, job, c->ranks[i].rank, ns);
}

/* Whether the kernels of ranks[i]'s steps in window w are not all stored yet: its agent measured
 * its steps and sends their kernels as windows (rs_kernel_total), which go out once they have
 * settled — seconds after the steps themselves. */
static bool
windows_pending(const struct ctx *c, const struct window *w, size_t i, const struct rs__knames *ns)
{
    const struct rs_rank_steps *rk = &c->ranks[i];
    return rk->n > 0 && rk->measured && rk->measured[rk->n - 1] &&
           ns->windows_end < min_u64(w->t1, ns->last_ns);
}

/* The comparison in window j. *pending: the kernels of some rank compared are not all stored yet
 * (windows_pending): then it tells nothing. */
static int
kernel_cause(struct ctx *c, rs_store_read *r, const char *job, size_t idx, size_t j,
             const struct identities *ids, double *slow_ms, double *extra_ms,
             struct rs_straggler_verdict *v, bool *pending)
{
    struct window *w = &c->w[j];
    struct rs__knames *all = calloc(c->n_ranks, sizeof *all);
    struct evidence top[MAX_EVIDENCE] = {{0}};
    double steps = (double)w->r[idx].steps;
    int rc = 0;

    *slow_ms = *extra_ms = 0;
    *pending = false;
    kernel_evidence_clear(v);
    if (!all)
        return -ENOMEM;
    /* kernels some ranks traced and others not (a capture's): no comparison of the rule's — the
     * server compares the captured ranks with each other (server/capture_evidence.h) */
    for (uint64_t s = w->first_step; s < w->first_step + c->W; s++)
        if (rs_mixed_steps_has(&c->mixed, s)) {
            free(all);
            return 0;
        }
    /* The peers' per-kernel medians from at most CAUSE_PEERS peers spread over the ranks: robust
     * already, and the kernels of 1,000 peers would cost more than the whole verdict. */
    size_t stride = c->n_ranks > CAUSE_PEERS + 1 ? c->n_ranks / CAUSE_PEERS : 1;
    for (size_t i = 0; i < c->n_ranks && rc == 0; i++) {
        if (i != idx && i % stride != 0)
            continue;
        rc = window_knames(c, r, job, j, i, ids, false, &all[i]);
        *pending |= windows_pending(c, w, i, &all[i]);
    }
    for (size_t k = 0; rc == 0 && k < all[idx].n; k++) {
        const struct rs__kname *mine = &all[idx].v[k];
        struct rs_samples mean = {NULL, 0, 0}, count = {NULL, 0, 0};
        for (size_t i = 0; i < c->n_ranks; i++) {
            if (i == idx || i % stride != 0)
                continue;
            const struct rs__kname *x = rs__knames_find(&all[i], mine->hash);
            double cnt = x ? x->count : 0, t = x ? x->ns : 0;
            rs_samples_add(&count, cnt * steps / (double)(w->r[i].steps ? w->r[i].steps : 1));
            if (cnt > 0)
                rs_samples_add(&mean, t / cnt);
        }
        double my_mean = mine->ns / mine->count;
        double peer_mean = mean.n ? rs_quantile(mean.v, mean.n, 0.5) : 0;
        double peer_count = rs_quantile(count.v, count.n, 0.5);
        double shared = peer_count < mine->count ? peer_count : mine->count;
        double slow = peer_mean > 0 ? shared * (my_mean - peer_mean) / 1e6 / steps : 0;
        double extra = (mine->count - shared) * my_mean / 1e6 / steps;
        *slow_ms += slow;
        *extra_ms += extra;
        double excess = slow > extra ? slow : extra;
        for (size_t e = 0; e < MAX_EVIDENCE; e++) {
            if (top[e].name && excess <= top[e].extra_ms_per_step)
                continue;
            memmove(&top[e + 1], &top[e], (MAX_EVIDENCE - e - 1) * sizeof top[0]);
            top[e] = (struct evidence){mine->name, peer_mean > 0 ? my_mean / peer_mean : 0, excess};
            break;
        }
        rs_samples_fini(&mean);
        rs_samples_fini(&count);
    }
    /* the evidence: the top kernels with an excess (the names copied: `all` goes now) */
    kernel_evidence_clear(v);
    for (size_t e = 0; rc == 0 && e < MAX_EVIDENCE && top[e].name; e++) {
        if (top[e].extra_ms_per_step <= 0)
            continue;
        char *name = strdup(top[e].name);
        if (!name) {
            rc = -ENOMEM;
            break;
        }
        v->kernels[v->n_kernels++] =
            (struct rs_straggler_kernel_evidence){name, top[e].ratio, top[e].extra_ms_per_step};
    }
    for (size_t i = 0; i < c->n_ranks; i++)
        rs__knames_fini(&all[i]);
    free(all);
    return rc;
}

/* Host-side records of `rank`, or of its peers, over window j, in ms per rank-step of the window:
 * launch waits (the GPU idle until the host queued work) into *launch, host synchronizations (the
 * host waiting for its GPU: event, stream and context syncs) into *sync; *seen_* when some were
 * recorded. */
static void
host_records_ms(struct ctx *c, rs_store_read *r, const char *job, size_t idx, bool peers, size_t j,
                double *launch, bool *seen_launch, double *sync, bool *seen_sync)
{
    struct rs_profile_scope scope = {job, c->ranks[idx].rank, peers, c->w[j].t0, c->w[j].t1};
    struct rs_profile_sync syncs[RS_COPY_KIND_COUNT];
    static const enum rs_copy_kind host_waits[] = {RS_SYNC_EVENT, RS_SYNC_STREAM, RS_SYNC_CONTEXT};
    size_t steps = 0;
    double sync_ns = 0;

    *launch = *sync = 0;
    if (rs_profile_host_side(r, &scope, syncs) != 0)
        return;
    for (size_t i = 0; i < c->n_ranks; i++)
        if (peers ? i != idx : i == idx)
            steps += c->w[j].r[i].steps;
    *seen_launch |= syncs[RS_LAUNCH_WAIT].count > 0;
    for (size_t k = 0; k < sizeof host_waits / sizeof host_waits[0]; k++) {
        *seen_sync |= syncs[host_waits[k]].count > 0;
        sync_ns += (double)syncs[host_waits[k]].ns;
    }
    if (steps) {
        *launch = (double)syncs[RS_LAUNCH_WAIT].ns / 1e6 / (double)steps;
        *sync = sync_ns / 1e6 / (double)steps;
    }
}

/* host_side evidence: the rank's host gap against its peers', and — when collectors recorded
 * them — how long its GPU waited for its host (launch waits) and its host for its GPU (syncs) per
 * step against its peers'. */
static void
host_side_evidence(struct ctx *c, rs_store_read *r, const char *job, size_t idx, size_t j,
                   double host_gap_ms, double peers_host_gap_ms,
                   struct rs_straggler_host_evidence *e)
{
    bool launch_seen = false, sync_seen = false;
    double own, peers, own_sync, peers_sync;

    host_records_ms(c, r, job, idx, false, j, &own, &launch_seen, &own_sync, &sync_seen);
    host_records_ms(c, r, job, idx, true, j, &peers, &launch_seen, &peers_sync, &sync_seen);
    *e = (struct rs_straggler_host_evidence){
        host_gap_ms, peers_host_gap_ms, launch_seen, own, peers, sync_seen, own_sync, peers_sync};
}

static double
peer_median(struct ctx *c, size_t j, size_t idx, size_t offset)
{
    struct rs_samples s = {NULL, 0, 0};
    for (size_t i = 0; i < c->n_ranks; i++) /* the peers compared likewise (traced_alone) */
        if (i != idx && c->w[j].r[i].traced_alone == c->w[j].r[idx].traced_alone)
            rs_samples_add(&s, *(const double *)((const char *)&c->w[j].r[i] + offset));
    /* none (a rank captured alone): its own, no difference */
    double m = s.n ? rs_quantile(s.v, s.n, 0.5)
                   : *(const double *)((const char *)&c->w[j].r[idx] + offset);
    rs_samples_fini(&s);
    return m;
}

/* The step of rk numbered `step`, or NULL (binary search: steps are in step order). */
/* The onset of rank idx's run of `run` qualifying windows (see stragglers.h): searched over the
 * steps of window run - 1 and of window run (the one before it) when there is one. out->known is
 * false when no step could be compared. Returns 0 or -ENOMEM. */
static int
onset_find(const struct ctx *c, size_t idx, size_t run, struct rs_straggler_onset *out)
{
    const struct rs_rank_steps *rk = &c->ranks[idx];
    const struct window *oldest = &c->w[run - 1];
    /* the window before the run's oldest — or, when the run reaches the oldest complete window,
     * the steps loaded before it — so that an onset inside the oldest window is found */
    uint64_t from = oldest->first_step >= c->W ? oldest->first_step - c->W : 0,
             to = oldest->first_step + c->W - 1;
    bool inferred = rk->inferred_period != 0;
    /* a step is slow above half the rank's slowdown in the newest window, at most the threshold:
     * a rank named near the threshold (measured 2% under interference) has few steps 3% slower */
    double half = (c->w[0].r[idx].slowdown - 1.0) / 2;
    double cut = half < c->o->threshold ? half : c->o->threshold;
    size_t span = (size_t)(to - from + 1), n = 0;
    bool *slow = calloc(span ? span : 1, sizeof *slow);
    uint64_t *steps = calloc(span ? span : 1, sizeof *steps);
    uint64_t *starts = calloc(span ? span : 1, sizeof *starts);
    double *peers = malloc((c->n_ranks ? c->n_ranks : 1) * sizeof *peers);
    int rc = 0;

    *out = (struct rs_straggler_onset){0};
    if (!slow || !steps || !starts || !peers) {
        rc = -ENOMEM;
        goto done;
    }
    for (uint64_t s = from; s <= to; s++) {
        const struct rs_step_summary *mine = step_of(rk, s);
        size_t np = 0;
        if (!mine || rs_mixed_steps_has(&c->mixed, s)) /* not comparable (mixed_steps.h) */
            continue;
        for (size_t i = 0; i < c->n_ranks; i++) {
            const struct rs_step_summary *p = i == idx ? NULL : step_of(&c->ranks[i], s);
            if (p)
                peers[np++] = work_ms(p);
        }
        if (np == 0)
            continue;
        double ref = rs_median(peers, np);
        slow[n] = ref > 0 && work_ms(mine) / ref - 1.0 >= cut;
        steps[n] = s;
        /* GPU time: the step's first kernel (a marker is host time; inferred steps start at the
         * end of a collective, GPU time already, and carry the GPU idle as host gap) */
        starts[n++] = mine->start_ns + (inferred ? 0 : mine->host_gap_ns);
    }
    if (n == 0) /* no step of the rank with peers at the same step: nothing to say */
        goto done;
    /* The split k (onset = steps[k]) with the fewest steps on the wrong side: slow before it, or
     * not slow from it on. One pass: wrong(k) = slow in [0, k) + not slow in [k, n). */
    size_t not_slow_after = 0, slow_before = 0, best_k = 0, best = SIZE_MAX;
    for (size_t k = 0; k < n; k++)
        not_slow_after += !slow[k];
    for (size_t k = 0; k < n; k++) {
        if (slow_before + not_slow_after < best) {
            best = slow_before + not_slow_after;
            best_k = k;
        }
        slow_before += slow[k];
        not_slow_after -= !slow[k];
    }
    *out = (struct rs_straggler_onset){.known = true,
                                       .step = steps[best_k],
                                       .start_ns = starts[best_k],
                                       .searched_from_step = steps[0],
                                       .searched_to_step = steps[n - 1],
                                       .steps_searched = n,
                                       .steps_disagreeing = best,
                                       .before_search = best_k == 0};
done:
    free(slow);
    free(steps);
    free(starts);
    free(peers);
    return rc;
}

/* The kernel speed (docs/analysis.md "The rule"): the step metrics dilute a slower GPU — its
 * compute under NCCL is stretched less than its waiting peers' (interference), and host gaps do
 * not slow — so a GPU whose kernels ran 3% slower measured 1.0 – 1.5% there. A rank with arrival
 * evidence, at least SUSPECT x threshold slower in its work, that does not meet the rule on its
 * work in window j, has its kernels compared with its peers' name by name (rs__kernel_speed: the
 * median over names, clock-free and undiluted): it meets the rule there when they run at least the
 * threshold slower with a standard error of at most KERNEL_SE x threshold. From the newest window
 * back while it keeps meeting it; the peers are the cause's sample (CAUSE_PEERS), each read once
 * per window and freed before the next (at most 4,096 durations per name: stragglers_int.h). A
 * window whose kernels are not all stored yet (windows_pending) ends the run. Returns 0, -ENOMEM
 * or a storage error. */
static int
kernel_pass(struct ctx *c, rs_store_read *r, const char *job, const struct identities *ids)
{
    const size_t n = c->n_ranks;
    const double thr = c->o->threshold;
    size_t stride = n > CAUSE_PEERS + 1 ? n / CAUSE_PEERS : 1;
    struct rs__knames *names = calloc(n, sizeof *names); /* window j's, read when first needed */
    bool *use = calloc(n, sizeof *use), *alive = calloc(n, sizeof *alive); /* its run goes on */
    int rc = 0;

    if (!names || !use || !alive) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        alive[i] = true;
    for (size_t j = 0; j < c->n_w && rc == 0; j++) {
        for (size_t i = 0; i < n; i++) {
            struct rank_window *rw = &c->w[j].r[i];
            struct rs__kernel_speed ks;
            bool pending = false;
            if (!alive[i] || rw->qualifies)
                continue;
            alive[i] = false;
            if (!rw->evidence || rw->slowdown - 1.0 < SUSPECT * thr)
                continue;
            for (size_t p = 0; p < n; p++) {
                use[p] = p == i || p % stride == 0;
                if (use[p] && names[p].t1 == 0 && /* not read yet */
                    (rc = window_knames(c, r, job, j, p, ids, true, &names[p])) != 0)
                    goto out;
                pending |= use[p] && windows_pending(c, &c->w[j], p, &names[p]);
            }
            double min_count = rw->steps / 2.0 < 4 ? 4 : rw->steps / 2.0;
            if (pending)
                continue;
            if ((rc = rs__kernel_speed(names, use, n, i, min_count, &ks)) != 0)
                goto out;
            rw->kernel_ratio = ks.ratio;
            rw->kernel_se = ks.se;
            if (!ks.known || ks.ratio - 1.0 < thr || ks.se > KERNEL_SE * thr)
                continue;
            rw->qualifies = rw->by_kernels = alive[i] = true;
        }
        for (size_t p = 0; p < n; p++) { /* the next window reads its own */
            rs__knames_fini(&names[p]);
            names[p] = (struct rs__knames){0};
        }
    }
out:
    for (size_t p = 0; names && p < n; p++)
        rs__knames_fini(&names[p]);
    free(names);
    free(use);
    free(alive);
    return rc;
}

static bool
qualifies(const struct ctx *c, size_t j, size_t i)
{
    return c->w[j].r[i].qualifies;
}

/* Whether rank i's run of qualifying windows is below the threshold in each: named only by strong
 * arrival evidence near the threshold. Such a rank may be slow on a share of its steps only (an
 * intermittent straggler whose slow steps lift its median a little): that verdict comes first. */
static bool
near_only(const struct ctx *c, size_t run, size_t i)
{
    for (size_t j = 0; j < run; j++)
        if (c->w[j].r[i].slowdown - 1.0 >= c->o->threshold)
            return false;
    return true;
}

static double
clamp01(double x)
{
    return x < 0 ? 0 : x > 1 ? 1 : x;
}

/* The confidence of a verdict (docs/analysis.md "Since, confidence"): the product of the margin
 * above the threshold (full at 1.5 x threshold), the arrival evidence (full at STRONG: the largest
 * of last_frac, wait_share x the ranks slow together and — for a rank named on shared evidence —
 * late_ratio, the clock-free lateness its shorter NCCL time shows), the separation from the noise
 * (full at 2 x SEPARATED spreads; 2 ranks have no robust spread: 0.8) and the run (0.9 when shorter
 * than 2 x windows_required windows). Calibrated on tests/bench/trace_sweep.py
 * (docs/BENCHMARKS.md). */
static double
verdict_confidence(const struct ctx *c, const struct rank_window *rw, size_t run)
{
    size_t slow = 0;
    for (size_t i = 0; i < c->n_ranks; i++)
        slow += c->w[0].r[i].slowdown - 1.0 >= c->o->threshold;
    /* named on its kernel speed: the margin and the separation are the kernels' (kernel_pass) */
    double margin = clamp01(((rw->by_kernels ? rw->kernel_ratio : rw->slowdown) - 1.0) /
                            (1.5 * c->o->threshold));
    double arrival = rw->wait_share * (double)(slow > 1 ? slow : 1);
    if (rw->last_frac > arrival)
        arrival = rw->last_frac;
    /* a rank hidden by a later one is never last and causes no wait: its lateness shows only as
     * less waiting in its own collectives (the `late` evidence of rank_evidence), which counts as
     * much as the other two where the rule named it on that (shared) evidence */
    if (slow > 1 && rw->late_ratio > arrival)
        arrival = rw->late_ratio;
    double evidence = clamp01(arrival / STRONG);
    double sep = rw->by_kernels
                     ? (rw->kernel_se > 0
                            ? clamp01((rw->kernel_ratio - 1.0) / rw->kernel_se / (2 * SEPARATED))
                            : 1.0)
                 : c->n_ranks <= 2    ? 0.8
                 : rw->separation < 0 ? (rw->work_ms > rw->peers_ms ? 1.0 : 0.0)
                                      : clamp01(rw->separation / (2 * SEPARATED));
    return margin * evidence * sep * (run >= 2 * c->o->windows_required ? 1.0 : 0.9);
}

/* Rank idx's verdict over its run of `run` qualifying windows into *v (zeroed by the caller;
 * its kernel names are v's even on failure). Returns 0, -ENOMEM or a storage error. */
static int
verdict(struct ctx *c, rs_store_read *r, const char *job, size_t idx, const struct identities *ids,
        size_t run, struct rs_straggler_verdict *v)
{
    const struct rank_window *rw = &c->w[0].r[idx];
    double impact_ns = 0, wall_ns = 0, best = rw->work_ms, min_work = rw->work_ms;
    double slow_ms, extra_ms;
    bool pending;
    enum rs_straggler_cause cause = RS_STRAGGLER_CAUSE_UNKNOWN;
    const struct identity *id = NULL;
    int rc;

    double lost_ms = 0;
    for (size_t j = 0; j < run; j++) {
        const struct rank_window *x = &c->w[j].r[idx];
        impact_ns += x->impact_ns;
        wall_ns += (double)(c->w[j].t1 - c->w[j].t0);
        /* the job runs at this rank's pace: each step loses its excess over the median rank */
        if (x->work_ms > x->peers_ms)
            lost_ms += (x->work_ms - x->peers_ms) * (double)x->steps;
    }
    for (size_t j = 0; j < c->n_w; j++)
        if (c->w[j].r[idx].work_ms < best)
            best = c->w[j].r[idx].work_ms;
    for (size_t i = 0; i < c->n_ranks; i++)
        if (c->w[0].r[i].work_ms < min_work)
            min_work = c->w[0].r[i].work_ms;
    id = find_identity(ids, c->ranks[idx].rank);
    /* the cause from the newest window whose kernels are all stored: the agents of a summarized
     * job send them seconds after the steps (a cause from part of them may be wrong); "unknown"
     * while no window in the lookback has them all */
    size_t j = 0;
    for (;; j++) {
        if ((rc = kernel_cause(c, r, job, idx, j, ids, &slow_ms, &extra_ms, v, &pending)) != 0)
            return rc;
        if (!pending || j + 1 == c->n_w)
            break;
    }
    double host_gap_ms = c->w[j].r[idx].host_gap_ms,
           host_ms =
               host_gap_ms - peer_median(c, j, idx, offsetof(struct rank_window, host_gap_ms));
    if (pending) {
        slow_ms = extra_ms = host_ms = 0;
        kernel_evidence_clear(v);
    } else if (host_ms >= slow_ms && host_ms >= extra_ms && host_ms > 0) {
        cause = RS_STRAGGLER_CAUSE_HOST_SIDE;
        kernel_evidence_clear(v);
        host_side_evidence(c, r, job, idx, j, host_gap_ms, host_gap_ms - host_ms,
                           &v->host_evidence);
    } else if (slow_ms >= extra_ms && slow_ms > 0)
        cause = RS_STRAGGLER_CAUSE_GPU_SLOW;
    else if (extra_ms > 0)
        cause = RS_STRAGGLER_CAUSE_EXTRA_WORK;
    double impact_pct = wall_ns > 0 ? 100.0 * lost_ms * 1e6 / wall_ns : 0;
    double confidence = verdict_confidence(c, rw, run);
    if ((rc = onset_find(c, idx, run, &v->onset)) != 0)
        return rc;
    v->rank = c->ranks[idx].rank;
    snprintf(v->host, sizeof v->host, "%s", id ? id->host : "");
    snprintf(v->gpu_uuid, sizeof v->gpu_uuid, "%s", id ? id->gpu : "");
    v->slowdown = rw->slowdown;
    v->last_frac = rw->last_frac;
    v->wait_share = rw->wait_share;
    v->instances = rw->instances;
    v->impact_s = lost_ms / 1e3;
    v->impact_pct = impact_pct;
    v->peer_wait_s = impact_ns / 1e9;
    v->cause = cause;
    v->excess_gpu_slow_ms = slow_ms;
    v->excess_extra_work_ms = extra_ms;
    v->excess_host_side_ms = host_ms;
    /* since: the onset when one was found — in GPU time, the start of the onset step's first kernel
     * (a step marker is host time; a host running ahead marks steps long before its GPU runs
     * them) — else the oldest window of the run */
    v->since_step = v->onset.known ? v->onset.step : c->w[run - 1].first_step;
    v->since_ns = v->onset.known ? v->onset.start_ns : c->w[run - 1].t0;
    v->separation = rw->separation;
    v->kernel_ratio = rw->by_kernels ? rw->kernel_ratio : 0;
    v->windows = run;
    v->confidence = confidence < 0 ? 0.0 : confidence;
    v->score_relative = min_work / rw->work_ms;
    v->score_individual = best / rw->work_ms;
    v->action = verdict_action(c->o, cause, impact_pct);
    /* the windows these figures cover: last_frac over the rank's instances of window 0, impact
     * over the run's windows */
    v->impact_window = (struct rs_straggler_span){
        c->w[run - 1].first_step, c->w[0].first_step + c->W - 1, c->w[run - 1].t0, c->w[0].t1};
    return 0;
}

static void
verdict_fini(struct rs_straggler_verdict *v)
{
    kernel_evidence_clear(v);
}

void
rs_straggler_report_fini(struct rs_straggler_report *rep)
{
    for (size_t i = 0; i < rep->n_verdicts; i++)
        verdict_fini(&rep->verdicts[i]);
    free(rep->verdicts);
    free(rep->ranks);
    free(rep->suspects);
    free(rep->job);
    *rep = (struct rs_straggler_report){0};
}

static int
verdict_rank_cmp(const void *a, const void *b)
{
    uint32_t x = ((const struct rs_straggler_verdict *)a)->rank,
             y = ((const struct rs_straggler_verdict *)b)->rank;
    return (x > y) - (x < y);
}

/* A verdict of kind straggler for rank i over its run of `run` windows, added to rep. */
static int
straggler_add(struct ctx *c, rs_store_read *r, const char *job, const struct identities *ids,
              size_t i, size_t run, struct rs_straggler_report *rep)
{
    if (RS_ARRAY_RESERVE(rep->verdicts, rep->cap_verdicts, rep->n_verdicts, 1) != 0)
        return -ENOMEM;
    struct rs_straggler_verdict *v = &rep->verdicts[rep->n_verdicts++];
    *v = (struct rs_straggler_verdict){0};
    int rc = verdict(c, r, job, i, ids, run, v);
    /* the strongest recommendation, for schedulers that read one field */
    if (rc == 0)
        rep->action = v->action > rep->action ? v->action : rep->action;
    return rc;
}

/* Intermittent verdicts (query/intermittent.h) over the steps of every window examined, for ranks
 * without a verdict. */
static int
intermittent_verdicts(struct ctx *c, rs_store_read *r, const char *job,
                      const struct identities *ids, bool *named, struct rs_straggler_report *rep)
{
    struct rs_intermittent *found;
    size_t n_found;
    /* and the steps loaded before the oldest complete window (up to one window): the slowness
     * may have begun there */
    uint64_t oldest = c->w[c->n_w - 1].first_step, to = c->w[0].first_step + c->W - 1;
    uint64_t from = oldest >= c->W ? oldest - c->W : 0;
    double wall_ns = 0;
    int rc = rs_intermittent_find(c->ranks, c->n_ranks, from, to, c->W, c->o->windows_required,
                                  INTERMITTENT_TAIL * c->o->threshold, &found, &n_found);

    if (rc != 0)
        return rc;
    for (size_t j = 0; j < c->n_w; j++)
        wall_ns += (double)(c->w[j].t1 - c->w[j].t0);
    for (size_t k = 0; k < n_found && rc == 0; k++) {
        const struct rs_intermittent *f = &found[k];
        if (named[f->index])
            continue;
        if (RS_ARRAY_RESERVE(rep->verdicts, rep->cap_verdicts, rep->n_verdicts, 1) != 0) {
            rc = -ENOMEM;
            break;
        }
        struct rs_straggler_verdict *v = &rep->verdicts[rep->n_verdicts++];
        *v = (struct rs_straggler_verdict){0};
        /* the figures of every window examined; then what makes it intermittent */
        if ((rc = verdict(c, r, job, f->index, ids, c->n_w, v)) != 0)
            break;
        named[f->index] = true;
        v->kind = RS_STRAGGLER_KIND_INTERMITTENT;
        v->duty = f->duty;
        v->tail_slowdown = f->tail_slowdown;
        v->impact_s = f->lost_ms / 1e3;
        v->impact_pct = wall_ns > 0 ? 100.0 * f->lost_ms * 1e6 / wall_ns : 0;
        v->since_step = f->first_slow_step;
        v->since_ns = f->first_slow_ns;
        v->onset = (struct rs_straggler_onset){0};
        v->confidence = clamp01(f->last_share) * clamp01((f->tail_slowdown - 1.0) /
                                                         (2 * INTERMITTENT_TAIL * c->o->threshold));
        v->action = verdict_action(c->o, v->cause, v->impact_pct);
        rep->action = v->action > rep->action ? v->action : rep->action;
    }
    free(found);
    return rc;
}

/* Suspects: in the newest window, ranks without a verdict at least SUSPECT x threshold slower than
 * their reference with arrival evidence and separated from the noise. Informational. Among 2 ranks
 * too: there the slower one is last at nearly every collective whatever the reason, so its arrival
 * evidence says nothing that its slowdown does not, and a slowdown below TWO_RANKS_APART x
 * threshold is within the spread of two healthy GPUs (ddp_tracegen's fault-free pair of seed 2,
 * GPUs 1.0% apart, was a suspect). */
static int
find_suspects(const struct ctx *c, const bool *named, struct rs_straggler_report *rep)
{
    for (size_t i = 0; i < c->n_ranks; i++) {
        const struct rank_window *rw = &c->w[0].r[i];
        if (named[i] || rw->slowdown - 1.0 < SUSPECT * c->o->threshold ||
            !(rw->evidence || rw->strong) || !rw->separated)
            continue;
        if (RS_ARRAY_RESERVE(rep->suspects, rep->cap_suspects, rep->n_suspects, 1) != 0)
            return -ENOMEM;
        struct rs_straggler_suspect *s = &rep->suspects[rep->n_suspects++];
        *s = (struct rs_straggler_suspect){c->ranks[i].rank, rw->slowdown, rw->last_frac,
                                           rw->wait_share, ""};
        snprintf(s->reason, sizeof s->reason, "%s",
                 rw->qualifies ? "meets the rule in the newest window only"
                               : "slower than its peers by less than the threshold");
    }
    return 0;
}

/* The summary line of a job with enough data. */
static void
summarize(const struct ctx *c, struct rs_straggler_report *rep, const char *fitted)
{
    double lo = 1e300, hi = 0;

    for (size_t i = 0; i < rep->n_ranks; i++) {
        lo = rep->ranks[i].slowdown < lo ? rep->ranks[i].slowdown : lo;
        hi = rep->ranks[i].slowdown > hi ? rep->ranks[i].slowdown : hi;
    }
    if (rep->n_verdicts == 0)
        snprintf(rep->summary, sizeof rep->summary,
                 "no straggler: per-rank compute + host gap within %.1f%% .. %+.1f%% of the "
                 "median over the last %zu steps%s",
                 100 * (lo - 1), 100 * (hi - 1), c->W, fitted);
    else
        snprintf(rep->summary, sizeof rep->summary, "%zu straggler(s)%s", rep->n_verdicts, fitted);
}

/* The rule over the ranks' steps (borrowed) into rep (zeroed by the caller). */
static int
evaluate(rs_store_read *r, const char *job, const struct rs_straggler_options *o,
         struct rs_rank_steps *steps, size_t n_ranks, struct rs_straggler_report *rep)
{
    struct ctx c = {o, o->window_steps, 0, false, steps, n_ranks, NULL, 0, NULL, {0, 0, NULL, 0}};
    struct identities ids = {NULL, 0, 0};
    bool *named = NULL;  /* per rank: has a verdict */
    size_t *runs = NULL; /* per rank: its run of qualifying windows, when a straggler */
    int rc;

    if (!(rep->job = strdup(job))) {
        rc = -ENOMEM;
        goto out;
    }
    if ((rc = rs_store_ranks_scan(r, job, on_rank_info, &ids)) ||
        (rc = rs_mixed_steps_find(c.ranks, c.n_ranks, &c.mixed)) ||
        (rc = (c.W = window_for_time(&c), fit_to_short_job(&c), build_windows(&c))))
        goto out;
    rep->enough_data = true;
    char fitted[160] = "";
    if (c.fitted)
        snprintf(fitted, sizeof fitted,
                 " (windows of %zu steps: the job has %zu steps per rank, fewer than %u windows of "
                 "%zu)",
                 c.W, c.fewest, o->windows_required, o->window_steps);
    if (c.n_ranks >= 2 && strcmp(rs_steps_source(c.ranks, c.n_ranks), "none") == 0) {
        rep->enough_data = false;
        snprintf(rep->summary, sizeof rep->summary,
                 "not enough data: no steps — the job marks none (NVTX ProfilerStep#N or "
                 "RANKSCOPE_STEP_RANGE) and its NCCL collectives show no periodic pattern");
    } else if (c.n_ranks < 2 || c.n_w < o->windows_required) {
        rep->enough_data = false;
        snprintf(rep->summary, sizeof rep->summary,
                 "not enough data: %zu ranks, %zu complete windows of %zu steps (need 2 ranks and "
                 "%u windows)",
                 c.n_ranks, c.n_w, c.W, o->windows_required);
    } else {
        if (RS_ARRAY_RESERVE(rep->ranks, rep->cap_ranks, 0, c.n_ranks) != 0) {
            rc = -ENOMEM;
            goto out;
        }
        if (!(named = calloc(c.n_ranks, sizeof *named)) ||
            !(runs = calloc(c.n_ranks, sizeof *runs))) {
            rc = -ENOMEM;
            goto out;
        }
        if ((rc = kernel_pass(&c, r, job, &ids)) != 0)
            goto out;
        for (size_t i = 0; i < c.n_ranks; i++) {
            const struct rank_window *rw = &c.w[0].r[i];
            size_t run = 0;
            rep->ranks[rep->n_ranks++] = (struct rs_straggler_rank){c.ranks[i].rank, rw->slowdown,
                                                                    rw->last_frac, rw->wait_share};
            while (run < c.n_w && qualifies(&c, run, i))
                run++;
            if (run < o->windows_required)
                continue;
            runs[i] = run;
            if (near_only(&c, run, i)) /* after the intermittent verdicts */
                continue;
            named[i] = true;
            if ((rc = straggler_add(&c, r, job, &ids, i, run, rep)) != 0)
                goto out;
        }
        if ((rc = intermittent_verdicts(&c, r, job, &ids, named, rep)) != 0)
            goto out;
        for (size_t i = 0; i < c.n_ranks; i++) {
            if (!runs[i] || named[i])
                continue;
            named[i] = true;
            if ((rc = straggler_add(&c, r, job, &ids, i, runs[i], rep)) != 0)
                goto out;
        }
        if (rep->n_verdicts > 1)
            qsort(rep->verdicts, rep->n_verdicts, sizeof *rep->verdicts, verdict_rank_cmp);
        if ((rc = find_suspects(&c, named, rep)) != 0)
            goto out;
        summarize(&c, rep, fitted);
    }
    if (c.n_w) /* the newest window: what slowdown and last_frac of ranks and verdicts cover */
        rep->window = (struct rs_straggler_span){c.w[0].first_step, c.w[0].first_step + c.W - 1,
                                                 c.w[0].t0, c.w[0].t1};
    rep->has_window = c.n_w > 0;
    rep->window_steps = c.W;
    rep->window_choice = c.fitted                 ? RS_STRAGGLER_WINDOW_SHORT_JOB
                         : c.W != o->window_steps ? RS_STRAGGLER_WINDOW_TIME
                         : o->window_s <= 0       ? RS_STRAGGLER_WINDOW_GIVEN
                                                  : RS_STRAGGLER_WINDOW_DEFAULT;
    rep->windows_evaluated = c.n_w;
    rep->threshold = o->threshold;
    rep->steps_source = rs_steps_source(c.ranks, c.n_ranks);
out:
    for (size_t j = 0; c.w && j < o->lookback_windows; j++)
        free(c.w[j].r);
    free(c.w);
    free(c.rise);
    rs_mixed_steps_fini(&c.mixed);
    free(ids.v);
    free(named);
    free(runs);
    return rc;
}

static json_t *
span_json(const struct rs_straggler_span *s)
{
    return json_pack("{s:I, s:I, s:I, s:I}", "first_step", (json_int_t)s->first_step, "last_step",
                     (json_int_t)s->last_step, "since_ns", (json_int_t)s->since_ns, "until_ns",
                     (json_int_t)s->until_ns);
}

static json_t *
onset_json(const struct rs_straggler_onset *o)
{
    if (!o->known)
        return json_null();
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:s}", "step", (json_int_t)o->step,
                     "start_ns", (json_int_t)o->start_ns, "searched_from_step",
                     (json_int_t)o->searched_from_step, "searched_to_step",
                     (json_int_t)o->searched_to_step, "steps_searched",
                     (json_int_t)o->steps_searched, "steps_disagreeing",
                     (json_int_t)o->steps_disagreeing, "before_search", o->before_search, "method",
                     "per step: compute + host gap above the peers' median at the same step by "
                     "min(threshold, half the rank's slowdown); the split into not slow / slow "
                     "with the fewest steps on the wrong side; start_ns in GPU time");
}

static json_t *
evidence_json(const struct rs_straggler_verdict *v)
{
    json_t *list = json_array();

    if (list && v->cause == RS_STRAGGLER_CAUSE_HOST_SIDE) {
        const struct rs_straggler_host_evidence *h = &v->host_evidence;
        json_t *e = json_pack("{s:f, s:f}", "host_gap_ms", h->host_gap_ms, "peers_host_gap_ms",
                              h->peers_host_gap_ms);
        if (e && h->has_launch_wait) {
            json_object_set_new(e, "launch_wait_ms", json_real(h->launch_wait_ms));
            json_object_set_new(e, "peers_launch_wait_ms", json_real(h->peers_launch_wait_ms));
        }
        if (e && h->has_sync_wait) {
            json_object_set_new(e, "sync_wait_ms", json_real(h->sync_wait_ms));
            json_object_set_new(e, "peers_sync_wait_ms", json_real(h->peers_sync_wait_ms));
        }
        if (!e || json_array_append_new(list, e) != 0) {
            json_decref(list);
            return NULL;
        }
        return list;
    }
    for (size_t e = 0; list && e < v->n_kernels; e++)
        if (json_array_append_new(list, json_pack("{s:s, s:f, s:f}", "kernel", v->kernels[e].kernel,
                                                  "ratio_to_peers", v->kernels[e].ratio_to_peers,
                                                  "extra_ms_per_step",
                                                  v->kernels[e].extra_ms_per_step)) != 0) {
            json_decref(list);
            return NULL;
        }
    return list;
}

static json_t *
verdict_json(const struct rs_straggler_verdict *v)
{
    json_t *j = json_pack(
        "{s:I, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:s, s:o, s:{s:f, s:f, s:f}, s:I, s:I, s:I, "
        "s:f, s:{s:f, s:f}, s:s, s:o, s:I, s:o, s:f}",
        "rank", (json_int_t)v->rank, "host", v->host, "gpu_uuid", v->gpu_uuid, "slowdown",
        v->slowdown, "last_frac", v->last_frac, "impact_s", v->impact_s, "impact_pct",
        v->impact_pct, "peer_wait_s", v->peer_wait_s, "cause", rs_straggler_cause_name(v->cause),
        "evidence", evidence_json(v), "excess_ms_per_step", "gpu_slow", v->excess_gpu_slow_ms,
        "extra_work", v->excess_extra_work_ms, "host_side", v->excess_host_side_ms, "since_step",
        (json_int_t)v->since_step, "since_ns", (json_int_t)v->since_ns, "windows",
        (json_int_t)v->windows, "confidence", v->confidence, "scores", "relative",
        v->score_relative, "individual", v->score_individual, "action",
        rs_straggler_action_name(v->action), "onset", onset_json(&v->onset), "instances",
        (json_int_t)v->instances, "impact_window", span_json(&v->impact_window), "wait_share",
        v->wait_share);
    if (j &&
        json_object_update_new(
            j, json_pack(
                   "{s:s, s:o, s:o, s:o, s:o}", "kind", rs_straggler_kind_name(v->kind),
                   "kernel_ratio", v->kernel_ratio > 0 ? json_real(v->kernel_ratio) : json_null(),
                   "separation", v->separation < 0 ? json_null() : json_real(v->separation), "duty",
                   v->kind == RS_STRAGGLER_KIND_INTERMITTENT ? json_real(v->duty) : json_null(),
                   "tail_slowdown",
                   v->kind == RS_STRAGGLER_KIND_INTERMITTENT ? json_real(v->tail_slowdown)
                                                             : json_null())) != 0) {
        json_decref(j);
        return NULL;
    }
    if (j && json_object_set_new(j, "hardware", rs_gpu_evidence_json(&v->hardware)) != 0) {
        json_decref(j);
        return NULL;
    }
    return j;
}

json_t *
rs_straggler_report_json(const struct rs_straggler_report *rep)
{
    json_t *verdicts = json_array(), *ranks = json_array(), *suspects = json_array(), *out = NULL;

    if (!verdicts || !ranks || !suspects)
        goto out;
    for (size_t i = 0; i < rep->n_verdicts; i++)
        if (json_array_append_new(verdicts, verdict_json(&rep->verdicts[i])) != 0)
            goto out;
    for (size_t i = 0; i < rep->n_ranks; i++)
        if (json_array_append_new(ranks, json_pack("{s:I, s:f, s:f, s:f}", "rank",
                                                   (json_int_t)rep->ranks[i].rank, "slowdown",
                                                   rep->ranks[i].slowdown, "last_frac",
                                                   rep->ranks[i].last_frac, "wait_share",
                                                   rep->ranks[i].wait_share)) != 0)
            goto out;
    for (size_t i = 0; i < rep->n_suspects; i++) {
        const struct rs_straggler_suspect *x = &rep->suspects[i];
        if (json_array_append_new(suspects, json_pack("{s:I, s:f, s:f, s:f, s:s}", "rank",
                                                      (json_int_t)x->rank, "slowdown", x->slowdown,
                                                      "last_frac", x->last_frac, "wait_share",
                                                      x->wait_share, "reason", x->reason)) != 0)
            goto out;
    }
    out = json_pack(
        "{s:s, s:s, s:I, s:s, s:I, s:o, s:f, s:s, s:b, s:s, s:O, s:O}", "job", rep->job, "action",
        rs_straggler_action_name(rep->action), "window_steps", (json_int_t)rep->window_steps,
        "window_choice", rs_straggler_window_choice_name(rep->window_choice), "windows_evaluated",
        (json_int_t)rep->windows_evaluated, "window",
        rep->has_window ? span_json(&rep->window) : json_null(), "threshold", rep->threshold,
        "steps_source", rep->steps_source, "enough_data", rep->enough_data, "summary", rep->summary,
        "stragglers", verdicts, "ranks", ranks);
    if (out && json_object_set(out, "suspects", suspects) != 0) {
        json_decref(out);
        out = NULL;
    }
out:
    json_decref(verdicts);
    json_decref(ranks);
    json_decref(suspects);
    return out;
}

size_t
rs_straggler_steps_needed(const struct rs_straggler_options *o)
{
    return o->window_steps * o->lookback_windows;
}

int
rs_stragglers_evaluate(rs_store_read *r, const char *job, const struct rs_straggler_options *opts,
                       struct rs_rank_steps *ranks, size_t n_ranks, struct rs_straggler_report *out)
{
    struct rs_straggler_options defaults;
    struct rs_straggler_report rep = {0};

    if (!opts)
        rs_straggler_options_default(&defaults);
    int rc = evaluate(r, job, opts ? opts : &defaults, ranks, n_ranks, &rep);
    if (rc == 0)
        rc = rs__query_straggler_hardware(r, &rep);
    if (rc != 0) {
        rs_straggler_report_fini(&rep);
        return rc;
    }
    *out = rep;
    return 0;
}

/* The windows end at the newest step every rank has (build_windows), while each rank's steps are
 * read back from its own newest: a rank further than the others lacked the windows' steps and
 * the job read "not enough data" (the 1,024-rank dashboard run, its 4 loading agents apart). */
bool
rs_straggler_steps_misaligned(const struct rs_rank_steps *ranks, size_t n_ranks,
                              const struct rs_straggler_options *o, uint64_t *common)
{
    size_t needed = rs_straggler_steps_needed(o);
    uint64_t end = UINT64_MAX;
    bool ahead = false;

    for (size_t i = 0; i < n_ranks; i++) {
        if (ranks[i].n == 0)
            return false; /* no windows at all (build_windows) */
        uint64_t last = ranks[i].steps[ranks[i].n - 1].step;
        end = last < end ? last : end;
    }
    for (size_t i = 0; i < n_ranks; i++) /* a rank read whole lacks nothing */
        ahead |= ranks[i].n >= needed &&
                 ranks[i].steps[ranks[i].n - 1].step - end > o->window_steps / 2;
    if (ahead)
        *common = end;
    return ahead;
}

int
rs_stragglers_evaluate_job(rs_store_read *r, const char *job,
                           const struct rs_straggler_options *opts, struct rs_straggler_report *out)
{
    struct rs_straggler_options defaults;
    const struct rs_straggler_options *o = opts;
    struct rs_rank_steps *ranks;
    size_t n;
    uint64_t common;
    if (!o) {
        rs_straggler_options_default(&defaults);
        o = &defaults;
    }
    size_t needed = rs_straggler_steps_needed(o);
    int rc = rs_query_job_steps_until(r, job, needed, o->until_step, &ranks, &n);
    if (rc == 0 && rs_straggler_steps_misaligned(ranks, n, o, &common)) {
        rs_job_steps_free(ranks, n); /* again, every rank up to the step all of them have */
        rc = rs_query_job_steps_until(r, job, needed, common, &ranks, &n);
    }
    if (rc != 0)
        return rc;
    rc = rs_stragglers_evaluate(r, job, o, ranks, n, out);
    rs_job_steps_free(ranks, n);
    return rc;
}

/* The report as JSON, and released. */
static int
report_to_json(struct rs_straggler_report *rep, json_t **out)
{
    json_t *doc = rs_straggler_report_json(rep);

    rs_straggler_report_fini(rep);
    if (!doc)
        return -ENOMEM;
    *out = doc;
    return 0;
}

int
rs_query_stragglers_on(rs_store_read *r, const char *job, const struct rs_straggler_options *opts,
                       struct rs_rank_steps *ranks, size_t n_ranks, json_t **out)
{
    struct rs_straggler_report rep;
    int rc = rs_stragglers_evaluate(r, job, opts, ranks, n_ranks, &rep);

    return rc != 0 ? rc : report_to_json(&rep, out);
}

int
rs_query_stragglers(rs_store_read *r, const char *job, const struct rs_straggler_options *opts,
                    json_t **out)
{
    struct rs_straggler_report rep;
    int rc = rs_stragglers_evaluate_job(r, job, opts, &rep);

    return rc != 0 ? rc : report_to_json(&rep, out);
}
