/* Steps and their metrics (see steps.h). Each rank's kernel and NCCL intervals are sorted once and
 * every step measured over them (common/step_metrics.h); steps the agent measured already, and
 * steps with stored summaries, are taken as they are. */
#include "query/steps.h"

#include "common/array.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/step_metrics.h"
#include "query/instances.h"
#include "query/kernel_period.h"
#include "query/step_infer.h"
#include "query/stats.h"

#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Copies measured metrics into a step's summary (step_ns follows from its final end: see
 * compute_rank_steps). */
static void
set_metrics(struct rs_step_summary *st, const struct rs_step_metrics *m)
{
    st->compute_ns = m->compute_ns;
    st->comm_ns = m->comm_ns;
    st->exposed_comm_ns = m->exposed_comm_ns;
    st->idle_ns = m->idle_ns;
    st->host_gap_ns = m->host_gap_ns;
    st->kernels = m->kernels;
}

struct steps_ctx {
    struct rs_step_summary *v;
    bool *measured; /* parallel to v */
    size_t n, cap, cap_measured;
    uint64_t until_step; /* the last step wanted */
};

static int
on_step(void *arg, const struct rs_step_record *st)
{
    struct steps_ctx *c = arg;

    if (st->step > c->until_step)
        return 1; /* in step order: done */
    if (st->end_ns <= st->start_ns)
        return 0;
    if (RS_ARRAY_RESERVE(c->v, c->cap, c->n, 1) != 0 ||
        RS_ARRAY_RESERVE(c->measured, c->cap_measured, c->n, 1) != 0)
        return -ENOMEM;
    memset(&c->v[c->n], 0, sizeof c->v[0]);
    c->v[c->n].step = st->step;
    c->v[c->n].start_ns = st->start_ns;
    c->v[c->n].end_ns = st->end_ns;
    c->measured[c->n] = st->measured;
    if (st->measured)
        set_metrics(&c->v[c->n], &st->metrics);
    c->n++;
    return 0;
}

struct kernel_ctx {
    struct rs_intervals *iv;
    uint64_t t0, t1;
};

static int
on_kernel(void *arg, const struct rs_kernel_record *k, const char *name, uint64_t name_hash)
{
    struct kernel_ctx *c = arg;
    if (k->end_ns <= c->t0 || k->start_ns >= c->t1)
        return 0;
    return rs_intervals_add(c->iv, k->start_ns, k->end_ns, false);
}

/* The collective instances of the range not covered by summaries: each member's NCCL kernel is an
 * interval of its rank, and each instance counts in the step of each member that it started in —
 * and, for the last arriver, as a last arrival with the median wait it caused the others. */
struct coll_ctx {
    struct rs_rank_steps *ranks; /* rank order */
    bool **done;                 /* per rank and step: has a stored summary */
    struct rs_intervals *iv;     /* parallel to ranks; filled only where measure[i] */
    const bool *measure;         /* per rank: some step is to be measured from its kernels */
    size_t n_ranks;
    uint64_t t0, t1;
    double *waits; /* scratch */
    size_t waits_cap;
};

/* The index of `rank` in ranks[0..n) (rank order), or SIZE_MAX. */
static uint64_t
rank_key(const void *p)
{
    return ((const struct rs_rank_steps *)p)->rank;
}

static uint64_t
start_key(const void *p)
{
    return ((const struct rs_step_summary *)p)->start_ns;
}

static size_t
rank_pos(const struct rs_rank_steps *ranks, size_t n, uint32_t rank)
{
    size_t i = rs_lower_bound_by(ranks, n, sizeof *ranks, rank_key, rank);
    return i < n && ranks[i].rank == rank ? i : SIZE_MAX;
}

/* The step of ranks[i] that contains t, when it has no summary yet; NULL otherwise. */
static struct rs_step_summary *
open_step_at(const struct coll_ctx *x, size_t i, uint64_t t)
{
    const struct rs_rank_steps *rk = &x->ranks[i];
    /* lo - 1: the last step that starts at or before t */
    size_t lo = t == UINT64_MAX
                    ? rk->n
                    : rs_lower_bound_by(rk->steps, rk->n, sizeof *rk->steps, start_key, t + 1);
    if (lo == 0 || t >= rk->steps[lo - 1].end_ns || x->done[i][lo - 1])
        return NULL;
    return &rk->steps[lo - 1];
}

static int
on_instance(void *arg, const struct rs_instance *in)
{
    struct coll_ctx *x = arg;
    struct rs_step_summary *st;
    int rc;

    for (size_t m = 0; m < in->n; m++) {
        const struct rs_instance_member *mb = &in->members[m];
        size_t i = rank_pos(x->ranks, x->n_ranks, mb->rank);
        if (i == SIZE_MAX)
            continue;
        if (x->measure[i] && mb->start_ns + mb->dur_ns > x->t0 && mb->start_ns < x->t1 &&
            (rc = rs_intervals_add(&x->iv[i], mb->start_ns, mb->start_ns + mb->dur_ns, true)) != 0)
            return rc;
        if (in->n >= 2 && (st = open_step_at(x, i, in->min_start_ns)))
            st->instances++;
    }
    if (in->n < 2 || in->at_min != 1) /* alone, or a tie: nobody arrived last */
        return 0;
    size_t i = rank_pos(x->ranks, x->n_ranks, in->members[in->last].rank);
    if (i == SIZE_MAX || !(st = open_step_at(x, i, in->min_start_ns)))
        return 0;
    if (RS_ARRAY_RESERVE(x->waits, x->waits_cap, 0, in->n) != 0)
        return -ENOMEM;
    st->last_arrivals++;
    st->peer_wait_ns += (uint64_t)rs_instance_peer_wait_ns(in, x->waits);
    return 0;
}

struct rank_list {
    uint32_t *v;
    uint64_t *last_ns; /* latest record time of each rank */
    size_t n, cap_v, cap_last;
};

static int
on_rank(void *arg, const struct rs_rank_info *info)
{
    struct rank_list *l = arg;
    if (RS_ARRAY_RESERVE(l->v, l->cap_v, l->n, 1) != 0 ||
        RS_ARRAY_RESERVE(l->last_ns, l->cap_last, l->n, 1) != 0)
        return -ENOMEM;
    l->v[l->n] = info->rank;
    l->last_ns[l->n++] = info->last_ns;
    return 0;
}

void
rs_job_steps_free(struct rs_rank_steps *ranks, size_t n_ranks)
{
    for (size_t i = 0; ranks && i < n_ranks; i++) {
        free(ranks[i].steps);
        free(ranks[i].to_store);
        free(ranks[i].summarized);
        free(ranks[i].measured);
    }
    free(ranks);
}

/* Stored summaries, merged into a rank's steps (both in step order); `done` marks the steps that
 * got one. */
struct summary_merge {
    struct rs_rank_steps *rk;
    bool *done;
    size_t next;
};

static int
on_summary(void *arg, const struct rs_step_summary *sum)
{
    struct summary_merge *m = arg;

    while (m->next < m->rk->n && m->rk->steps[m->next].step < sum->step)
        m->next++;
    if (m->next == m->rk->n)
        return 1; /* past the steps asked for */
    struct rs_step_summary *st = &m->rk->steps[m->next];
    if (st->step == sum->step && st->start_ns == sum->start_ns && st->end_ns == sum->end_ns) {
        *st = *sum; /* a summary of another step record with the same number is ignored */
        m->done[m->next] = true;
    }
    return 0;
}

/* Copies the kept steps of a rank (rs_query_job_steps_kept) that the load asks for — from step
 * `from` on, all but the newest, whose end may still move to the start of a step that arrived since
 * — into sc, and returns the step to read on from. */
static uint64_t
take_kept(const struct rs_rank_steps *kept, uint64_t from, uint64_t last, struct steps_ctx *sc)
{
    if (!kept || kept->n < 2 || kept->steps[kept->n - 1].step > last)
        return from;
    size_t first = 0;
    while (first < kept->n - 1 && kept->steps[first].step < from)
        first++;
    size_t n = kept->n - 1 - first;
    if (n == 0 || !(sc->v = malloc(n * sizeof *sc->v)) ||
        !(sc->measured = calloc(n, sizeof *sc->measured))) {
        free(sc->v);
        sc->v = NULL;
        return from;
    }
    memcpy(sc->v, kept->steps + first, n * sizeof *sc->v);
    if (kept->measured)
        memcpy(sc->measured, kept->measured + first, n * sizeof *sc->measured);
    sc->n = sc->cap = sc->cap_measured = n;
    return kept->steps[kept->n - 1].step;
}

/* Reads the rank's newest `last_steps` step records (all when 0) into rk, those in `kept` (may be
 * NULL) from memory: the first *n_kept steps of rk come from there. None when it has no step
 * records (then its steps are inferred). */
static int
read_rank_steps(rs_store_read *r, const char *job, size_t last_steps, uint64_t until_step,
                const struct rs_rank_steps *kept, struct rs_rank_steps *rk, size_t *n_kept)
{
    struct steps_ctx sc = {NULL, NULL, 0, 0, 0, until_step};
    uint64_t last = 0, from = 0;
    int rc = rs_store_last_step(r, job, rk->rank, &last);

    *n_kept = 0;
    if (rc == RS_E_NOT_FOUND)
        return 0;
    if (rc != 0)
        return rc;
    last = last < until_step ? last : until_step;
    if (last_steps && last + 1 > last_steps)
        from = last + 1 - last_steps;
    uint64_t read_from = take_kept(kept, from, last, &sc);
    *n_kept = sc.n;
    if ((rc = rs_store_steps_scan(r, job, rk->rank, read_from, on_step, &sc)) != 0 && rc != 1) {
        free(sc.v);
        free(sc.measured);
        return rc;
    }
    if (last_steps && sc.n > last_steps) { /* keep the newest */
        size_t drop = sc.n - last_steps;
        memmove(sc.v, sc.v + drop, last_steps * sizeof *sc.v);
        memmove(sc.measured, sc.measured + drop, last_steps * sizeof *sc.measured);
        sc.n = last_steps;
        *n_kept = *n_kept > drop ? *n_kept - drop : 0;
    }
    /* A step lasts until the next one starts. Markers are host time: in a job whose host runs
     * ahead of its GPU, a ProfilerStep-style range may cover only the launches (2.6 ms of a
     * 17.5 ms step in tests/gpu/ddp_train.py on H200, docs/BENCHMARKS.md run F) while the GPU
     * works until the next range; start to start
     * holds each step's GPU time at steady state. */
    for (size_t k = 0; k + 1 < sc.n; k++)
        if (sc.v[k + 1].step == sc.v[k].step + 1 && sc.v[k + 1].start_ns > sc.v[k].end_ns)
            sc.v[k].end_ns = sc.v[k + 1].start_ns;
    rk->steps = sc.v;
    rk->measured = sc.measured;
    rk->n = sc.n;
    return 0;
}

/* Per-rank collective records for inference, collected in one range scan of the job. */
struct infer_ctx {
    struct rs_rank_steps *ranks; /* rank order */
    size_t n_ranks;
    struct rs_collective_record **v; /* parallel to ranks; only for ranks without steps */
    size_t *n, *cap;
};

static int
on_infer_record(void *arg, uint32_t rank, const struct rs_collective_record *c)
{
    struct infer_ctx *x = arg;
    size_t lo = rank_pos(x->ranks, x->n_ranks, rank);

    if (lo == SIZE_MAX || x->ranks[lo].n > 0)
        return 0; /* not a rank of the job, or one with step records */
    if (RS_ARRAY_RESERVE(x->v[lo], x->cap[lo], x->n[lo], 1) != 0)
        return -ENOMEM;
    x->v[lo][x->n[lo]++] = *c;
    return 0;
}

static int
by_coll_start(const void *a, const void *b)
{
    uint64_t x = ((const struct rs_collective_record *)a)->start_ns;
    uint64_t y = ((const struct rs_collective_record *)b)->start_ns;
    return x < y ? -1 : x > y;
}

/* Steps of the ranks without step records, from their collectives of the job's last
 * RS_INFER_WINDOW_NS (step_infer.h); the newest last_steps of them are kept. */
static int
infer_rank_steps(rs_store_read *r, const char *job, const struct rs_job_info *info,
                 size_t last_steps, uint64_t until_step, struct rs_rank_steps *ranks,
                 size_t n_ranks)
{
    struct infer_ctx x = {ranks, n_ranks, calloc(n_ranks, sizeof *x.v),
                          calloc(n_ranks, sizeof *x.n), calloc(n_ranks, sizeof *x.cap)};
    uint64_t t0 = info->last_ns > RS_INFER_WINDOW_NS ? info->last_ns - RS_INFER_WINDOW_NS : 0;
    int rc = -ENOMEM;

    if (!x.v || !x.n || !x.cap)
        goto out;
    if ((rc = rs_store_collectives_scan_range(r, job, t0, info->last_ns + 1, on_infer_record,
                                              &x)) != 0)
        goto out;
    for (size_t i = 0; i < n_ranks && rc == 0; i++) {
        struct rs_step_record *st;
        size_t n;
        uint32_t period;
        if (x.n[i] < 2)
            continue;
        qsort(x.v[i], x.n[i], sizeof *x.v[i], by_coll_start);
        if ((rc = rs_infer_steps(x.v[i], x.n[i], &st, &n, &period)) != 0)
            break;
        while (n > 0 && st[n - 1].step > until_step)
            n--;
        size_t keep = last_steps && n > last_steps ? last_steps : n;
        if (keep && !(ranks[i].steps = calloc(keep, sizeof *ranks[i].steps)))
            rc = -ENOMEM;
        for (size_t k = 0; rc == 0 && k < keep; k++) {
            const struct rs_step_record *sr = &st[n - keep + k];
            ranks[i].steps[k] = (struct rs_step_summary){
                .step = sr->step, .start_ns = sr->start_ns, .end_ns = sr->end_ns};
        }
        ranks[i].n = rc == 0 ? keep : 0;
        ranks[i].inferred_period = period;
        free(st);
    }
    /* no periodic NCCL pattern (single GPU, markerless traces): the kernel-name period */
    for (size_t i = 0; i < n_ranks && rc == 0; i++)
        if (ranks[i].n == 0)
            rc = rs_kernel_period_rank_steps(r, job, info->last_ns, last_steps, until_step,
                                             &ranks[i]);
out:
    for (size_t i = 0; x.v && i < n_ranks; i++)
        free(x.v[i]);
    free(x.v);
    free(x.n);
    free(x.cap);
    return rc;
}

/* Merges the stored summaries into the rank's steps after the first n_kept (kept ones have
 * theirs); the time range of the steps without one goes to *t0, *t1. */
static int
merge_summaries(rs_store_read *r, const char *job, struct rs_rank_steps *rk, size_t n_kept,
                bool **done, uint64_t *t0, uint64_t *t1)
{
    if (rk->n == 0)
        return 0;
    if (!(*done = calloc(rk->n, sizeof **done)))
        return -ENOMEM;
    memset(*done, true, n_kept);
    struct summary_merge m = {rk, *done, n_kept};
    int rc = n_kept == rk->n ? 0
                             : rs_store_step_summaries_scan(r, job, rk->rank,
                                                            rk->steps[n_kept].step, on_summary, &m);
    if (rc != 0 && rc != 1)
        return rc;
    for (size_t k = 0; k < rk->n; k++) {
        if ((*done)[k])
            continue;
        *t0 = rk->steps[k].start_ns < *t0 ? rk->steps[k].start_ns : *t0;
        *t1 = rk->steps[k].end_ns > *t1 ? rk->steps[k].end_ns : *t1;
    }
    return 0;
}

/* Whether some step of rk without a summary is to be measured here, from its kernels (steps its
 * agent measured need none: it sent no kernels). */
static bool
needs_kernels(const struct rs_rank_steps *rk, const bool *done)
{
    for (size_t k = 0; k < rk->n; k++)
        if (!done[k] && !(rk->measured && rk->measured[k]))
            return true;
    return false;
}

/* Computes the steps of one rank that have no summary — from its kernels and NCCL kernels (colls,
 * consumed) when `measure` (needs_kernels) — and flags the settled ones for storing. */
static int
compute_rank_steps(rs_store_read *r, const char *job, struct rs_rank_steps *rk, const bool *done,
                   bool measure, uint64_t settled_until, struct rs_intervals *kernels,
                   struct rs_intervals *colls)
{
    uint64_t t0 = UINT64_MAX, t1 = 0;
    int rc;

    for (size_t k = 0; k < rk->n; k++)
        if (!done[k]) {
            t0 = rk->steps[k].start_ns < t0 ? rk->steps[k].start_ns : t0;
            t1 = rk->steps[k].end_ns > t1 ? rk->steps[k].end_ns : t1;
        }
    if (t1 == 0)
        return 0;
    rs_intervals_clear(kernels);
    if (measure) {
        struct kernel_ctx kc = {kernels, t0, t1};
        if ((rc = rs_store_kernels_scan(r, job, rk->rank, rs_store_kernel_scan_from(t0), t1,
                                        on_kernel, &kc)) != 0)
            return rc;
        rs_intervals_sort(kernels);
        rs_intervals_sort(colls);
        if ((rc = rs_intervals_merge(kernels, colls)) != 0)
            return rc;
    }
    if (!(rk->to_store = calloc(rk->n, sizeof *rk->to_store)))
        return -ENOMEM;
    for (size_t k = 0; k < rk->n; k++) {
        struct rs_step_summary *st = &rk->steps[k];
        if (done[k])
            continue;
        st->step_ns =
            st->end_ns - st->start_ns; /* (ends move to the next start: read_rank_steps) */
        if (!(rk->measured && rk->measured[k])) {
            struct rs_step_metrics m;
            rs_intervals_measure(kernels, st->start_ns, st->end_ns, &m);
            /* A step inferred from NCCL starts at the end of a collective, not where the host began
             * the step: the optimizer's kernels follow at once and the host's stall (a data loader,
             * a .item()) shows as GPU idle later in the step. Its host gap is the step's GPU idle
             * (docs/analysis.md "Step metrics"): no NCCL wait is idle — a rank waiting for its
             * peers runs its NCCL kernel — so the idle is the GPU waiting for its host. Steps from
             * the kernel-name period start where the GPU idles for its host already. */
            if (rk->inferred_period && !rk->kernel_period)
                m.host_gap_ns = m.idle_ns;
            set_metrics(st, &m);
        }
        if (st->end_ns + RS_STEP_SETTLE_NS <= settled_until) {
            rk->to_store[k] = true;
            rk->n_to_store++;
        }
    }
    return 0;
}

int
rs_query_job_steps(rs_store_read *r, const char *job, size_t last_steps, struct rs_rank_steps **out,
                   size_t *n_ranks)
{
    return rs_query_job_steps_until(r, job, last_steps, UINT64_MAX, out, n_ranks);
}

int
rs_query_job_steps_until(rs_store_read *r, const char *job, size_t last_steps, uint64_t until_step,
                         struct rs_rank_steps **out, size_t *n_ranks)
{
    return rs_query_job_steps_kept(r, job, last_steps, until_step, NULL, 0, out, n_ranks);
}

int
rs_query_job_steps_kept(rs_store_read *r, const char *job, size_t last_steps, uint64_t until_step,
                        const struct rs_rank_steps *kept, size_t n_kept_ranks,
                        struct rs_rank_steps **out, size_t *n_ranks)
{
    struct rank_list list = {NULL, NULL, 0, 0, 0};
    struct rs_rank_steps *ranks = NULL;
    struct rs_intervals *colls = NULL, kernels = {0};
    bool **done = NULL, *measure = NULL;
    size_t *n_kept = NULL;
    uint64_t t0 = UINT64_MAX, t1 = 0;
    int rc;

    struct rs_job_info info;
    if ((rc = rs_store_job_get(r, job, &info)) != 0 ||
        (rc = rs_store_ranks_scan(r, job, on_rank, &list)) != 0)
        goto out;
    /* A step is settled once every live rank's records reach RS_STEP_SETTLE_NS past it (its
     * collectives involve the others; a rank silent for a minute longer than the newest is gone),
     * or once nothing has arrived for that long: then all of them are. */
    uint64_t newest = 0, settled_until = UINT64_MAX;
    for (size_t i = 0; i < list.n; i++)
        newest = list.last_ns[i] > newest ? list.last_ns[i] : newest;
    for (size_t i = 0; i < list.n; i++)
        if (list.last_ns[i] + RS_RANK_GONE_NS >= newest && list.last_ns[i] < settled_until)
            settled_until = list.last_ns[i];
    if (info.received_ns + RS_STEP_SETTLE_NS <= rs_clock_realtime_ns())
        settled_until = UINT64_MAX - RS_STEP_SETTLE_NS;
    ranks = calloc(list.n ? list.n : 1, sizeof *ranks);
    colls = calloc(list.n ? list.n : 1, sizeof *colls);
    done = calloc(list.n ? list.n : 1, sizeof *done);
    n_kept = calloc(list.n ? list.n : 1, sizeof *n_kept);
    if (!ranks || !colls || !done || !n_kept) {
        rc = -ENOMEM;
        goto out;
    }
    /* the steps of every rank (marked, else inferred) with their stored summaries; what lacks one
     * bounds [t0, t1) */
    bool unmarked = false;
    for (size_t i = 0; i < list.n; i++) {
        ranks[i].rank = list.v[i];
        size_t k = rank_pos(kept, n_kept_ranks, list.v[i]);
        if ((rc = read_rank_steps(r, job, last_steps, until_step, k == SIZE_MAX ? NULL : &kept[k],
                                  &ranks[i], &n_kept[i])) != 0)
            goto out;
        unmarked |= ranks[i].n == 0;
    }
    if (unmarked &&
        (rc = infer_rank_steps(r, job, &info, last_steps, until_step, ranks, list.n)) != 0)
        goto out;
    if (!(measure = calloc(list.n ? list.n : 1, sizeof *measure))) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < list.n; i++) {
        if ((rc = merge_summaries(r, job, &ranks[i], n_kept[i], &done[i], &t0, &t1)) != 0)
            goto out;
        measure[i] = ranks[i].n && needs_kernels(&ranks[i], done[i]);
    }
    /* the collective instances of that range (none when every step has a summary), and the NCCL
     * kernels of the ranks measured here */
    struct coll_ctx cc = {ranks, done, colls, measure, list.n, t0, t1, NULL, 0};
    rc = t1 > t0 ? rs_instances_scan_range(r, job, t0, t1, on_instance, &cc) : 0;
    free(cc.waits);
    if (rc != 0)
        goto out;
    /* then one rank at a time: its kernels and NCCL kernels in start order, measured per step */
    for (size_t i = 0; i < list.n; i++) {
        if (ranks[i].n && (rc = compute_rank_steps(r, job, &ranks[i], done[i], measure[i],
                                                   settled_until, &kernels, &colls[i])) != 0)
            goto out;
        free(colls[i].v);
        colls[i].v = NULL;
        ranks[i].summarized = done[i]; /* the rank's now */
        done[i] = NULL;
    }
    *out = ranks;
    *n_ranks = list.n;
    ranks = NULL;
out:
    rs_job_steps_free(ranks, list.n);
    for (size_t i = 0; i < list.n; i++) {
        if (colls)
            free(colls[i].v);
        if (done)
            free(done[i]);
    }
    free(colls);
    free(done);
    free(n_kept);
    free(measure);
    rs_intervals_fini(&kernels);
    free(list.v);
    free(list.last_ns);
    return rc;
}

void
rs_job_steps_keep_final(struct rs_rank_steps *ranks, size_t n_ranks, bool with_to_store)
{
    for (size_t i = 0; i < n_ranks; i++) {
        struct rs_rank_steps *rk = &ranks[i];
        size_t n = 0;
        while (!rk->inferred_period && n < rk->n && rs_step_is_final(rk, n, with_to_store))
            n++;
        rk->n = n;
        free(rk->summarized);
        free(rk->to_store);
        rk->summarized = rk->to_store = NULL;
        rk->n_to_store = 0;
    }
}

const char *
rs_steps_source(const struct rs_rank_steps *ranks, size_t n_ranks)
{
    size_t marked = 0, inferred = 0, by_kernels = 0;
    for (size_t i = 0; i < n_ranks; i++) {
        if (ranks[i].n == 0)
            continue;
        if (ranks[i].kernel_period)
            by_kernels++;
        else if (ranks[i].inferred_period)
            inferred++;
        else
            marked++;
    }
    if ((marked != 0) + (inferred != 0) + (by_kernels != 0) > 1)
        return "mixed";
    return marked ? "markers" : inferred ? "inferred" : by_kernels ? "kernel_period" : "none";
}

static double
median_ms(const struct rs_step_summary *steps, size_t n, size_t offset)
{
    struct rs_samples s = {NULL, 0, 0};
    double m;

    for (size_t i = 0; i < n; i++)
        rs_samples_add(&s, (double)*(const uint64_t *)((const char *)&steps[i] + offset) / 1e6);
    m = rs_quantile(s.v, s.n, 0.5);
    rs_samples_fini(&s);
    return m;
}

#define FIELD(f) offsetof(struct rs_step_summary, f)

/* One rank's entry of the answer (its newest last_steps steps, all when 0). NULL: no memory. */
static json_t *
rank_json(const struct rs_rank_steps *rk, size_t last_steps)
{
    size_t first = last_steps && rk->n > last_steps ? rk->n - last_steps : 0, n = rk->n - first;
    const struct rs_step_summary *v = rk->steps + first;
    json_t *steps = json_array();

    for (size_t k = 0; steps && k < n; k++) {
        const struct rs_step_summary *m = &v[k];
        if (json_array_append_new(
                steps, json_pack("{s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:I}", "step",
                                 (json_int_t)m->step, "start_ns", (json_int_t)m->start_ns,
                                 "step_ms", m->step_ns / 1e6, "compute_ms", m->compute_ns / 1e6,
                                 "comm_ms", m->comm_ns / 1e6, "exposed_comm_ms",
                                 m->exposed_comm_ns / 1e6, "idle_ms", m->idle_ns / 1e6,
                                 "host_gap_ms", m->host_gap_ns / 1e6, "kernels",
                                 (json_int_t)m->kernels)) != 0) {
            json_decref(steps);
            steps = NULL;
        }
    }
    json_t *median = json_pack(
        "{s:f, s:f, s:f, s:f, s:f, s:f}", "step_ms", median_ms(v, n, FIELD(step_ns)), "compute_ms",
        median_ms(v, n, FIELD(compute_ns)), "comm_ms", median_ms(v, n, FIELD(comm_ns)),
        "exposed_comm_ms", median_ms(v, n, FIELD(exposed_comm_ns)), "idle_ms",
        median_ms(v, n, FIELD(idle_ns)), "host_gap_ms", median_ms(v, n, FIELD(host_gap_ns)));
    json_t *doc = steps && median
                      ? json_pack("{s:I, s:o, s:o, s:o}", "rank", (json_int_t)rk->rank, "median",
                                  median, "inferred_period",
                                  rk->inferred_period ? json_integer(rk->inferred_period)
                                                      : json_null(),
                                  "steps", steps)
                      : NULL;
    if (!doc) {
        json_decref(steps);
        json_decref(median);
        return NULL;
    }
    if (rk->inferred_period &&
        json_object_set_new(doc, "inferred_from",
                            json_string(rk->kernel_period ? "kernel_period" : "nccl_pattern")) != 0) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

/* The answer's outer object, "ranks" holding `list` (taken). */
static json_t *
outer_json(const char *job, const struct rs_rank_steps *ranks, size_t n_ranks, size_t last_steps,
           json_t *list)
{
    return list ? json_pack("{s:s, s:I, s:s, s:o}", "job", job, "last_steps",
                            (json_int_t)last_steps, "steps_source",
                            rs_steps_source(ranks, n_ranks), "ranks", list)
                : NULL;
}

json_t *
rs_steps_json(const char *job, const struct rs_rank_steps *ranks, size_t n_ranks, size_t last_steps)
{
    json_t *list = json_array();

    for (size_t i = 0; list && i < n_ranks; i++)
        if (json_array_append_new(list, rank_json(&ranks[i], last_steps)) != 0) {
            json_decref(list);
            list = NULL;
        }
    return outer_json(job, ranks, n_ranks, last_steps, list);
}

int
rs_steps_text(const char *job, const struct rs_rank_steps *ranks, size_t n_ranks,
              size_t last_steps, size_t flags, char **out, size_t *out_len)
{
    /* the outer object dumped with an empty "ranks", which is last: its text ends in "[]}", and
     * the ranks' texts go between the brackets, as a dump of the whole tree would put them */
    char *head = NULL, *buf = NULL;
    size_t len = 0;
    FILE *f = NULL;
    int rc = -ENOMEM;

    if (!(flags & JSON_COMPACT) || (flags & JSON_MAX_INDENT)) /* the ranks' separator is "," */
        return -EINVAL;
    json_t *outer = outer_json(job, ranks, n_ranks, last_steps, json_array());
    head = outer ? json_dumps(outer, flags) : NULL;
    json_decref(outer);
    if (!head || strlen(head) < 3 || strcmp(head + strlen(head) - 3, "[]}") != 0)
        goto out;
    if (!(f = open_memstream(&buf, &len)))
        goto out;
    fwrite(head, 1, strlen(head) - 2, f);
    for (size_t i = 0; i < n_ranks; i++) {
        json_t *doc = rank_json(&ranks[i], last_steps);
        int bad = !doc || (i && fputc(',', f) == EOF) || json_dumpf(doc, f, flags) != 0;
        json_decref(doc);
        if (bad)
            goto out;
    }
    if (fputs("]}", f) == EOF)
        goto out;
    rc = 0;
out:
    if (f && fclose(f) != 0 && rc == 0)
        rc = -ENOMEM;
    free(head);
    if (rc != 0) {
        free(buf);
        return rc;
    }
    *out = buf;
    *out_len = len;
    return 0;
}

int
rs_query_steps(rs_store_read *r, const char *job, size_t last_steps, json_t **out)
{
    struct rs_rank_steps *ranks;
    size_t n;
    int rc = rs_query_job_steps(r, job, last_steps, &ranks, &n);

    if (rc != 0)
        return rc;
    *out = rs_steps_json(job, ranks, n, last_steps);
    rs_job_steps_free(ranks, n);
    return *out ? 0 : -ENOMEM;
}

int
rs_query_steps_text(rs_store_read *r, const char *job, size_t last_steps, size_t flags, char **out,
                    size_t *len)
{
    struct rs_rank_steps *ranks;
    size_t n;
    int rc = rs_query_job_steps(r, job, last_steps, &ranks, &n);

    if (rc != 0)
        return rc;
    rc = rs_steps_text(job, ranks, n, last_steps, flags, out, len);
    rs_job_steps_free(ranks, n);
    return rc;
}
