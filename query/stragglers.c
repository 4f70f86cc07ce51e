/* The straggler rule with cause and impact (see stragglers.h). */
#include "query/stragglers.h"

#include "common/error.h"
#include "common/hash.h"
#include "query/instances.h"
#include "query/stats.h"
#include "query/steps.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCAN_MARGIN_NS (60ull * 1000000000ull)
#define MAX_EVIDENCE 3
#define CAUSE_PEERS 16 /* peers whose kernels are compared with a straggler's */

void
rs_straggler_options_default(struct rs_straggler_options *o)
{
    *o = (struct rs_straggler_options){30, 2, 0.03, 0.5, 10};
}

struct rank_window {
    size_t steps;
    double work_ms;  /* median of compute + host gap */
    double peers_ms; /* median over the other ranks of their work_ms */
    double compute_ms, host_gap_ms, step_ms, kernels;
    uint64_t last;    /* instances it arrived last at */
    double impact_ns; /* others' median wait at those instances */
};

struct window {
    uint64_t first_step, t0, t1; /* steps (first_step, ...], time [t0, t1) */
    uint64_t instances;
    struct rank_window *r; /* per rank index */
};

struct ctx {
    const struct rs_straggler_options *o;
    struct rs_rank_steps *ranks;
    size_t n_ranks;
    struct window *w;
    size_t n_w;
    uint32_t max_rank;
    int32_t *index_of; /* rank -> index in ranks, -1 */
};

/* Steps (hi - w, hi], written without going below 0. */
static bool
in_window(uint64_t step, uint64_t hi, uint64_t w)
{
    return step <= hi && step + w > hi;
}

static double
median_of(const struct rs_step_summary *v, size_t n, uint64_t hi, uint64_t w, int what)
{
    struct rs_samples s = {NULL, 0, 0};
    double m;

    for (size_t i = 0; i < n; i++) {
        if (!in_window(v[i].step, hi, w))
            continue;
        double x = what == 0   ? (double)(v[i].compute_ns + v[i].host_gap_ns)
                   : what == 1 ? (double)v[i].compute_ns
                   : what == 2 ? (double)v[i].host_gap_ns
                   : what == 3 ? (double)v[i].step_ns
                               : (double)v[i].kernels * 1e6;
        if (rs_samples_add(&s, x / 1e6) != 0)
            break;
    }
    m = rs_quantile(s.v, s.n, 0.5);
    rs_samples_fini(&s);
    return m;
}

/* Builds windows of window_steps aligned on the newest step all ranks have. */
static int
build_windows(struct ctx *c)
{
    const size_t W = c->o->window_steps;
    uint64_t end = UINT64_MAX;

    for (size_t i = 0; i < c->n_ranks; i++) {
        if (c->ranks[i].n == 0)
            return 0;
        uint64_t last = c->ranks[i].steps[c->ranks[i].n - 1].step;
        if (last < end)
            end = last;
    }
    if (!(c->w = calloc(c->o->lookback_windows, sizeof *c->w)))
        return -ENOMEM;
    for (size_t j = 0; j < c->o->lookback_windows && end + 1 >= (j + 1) * W; j++) {
        struct window *w = &c->w[j];
        uint64_t hi = end - j * W;
        struct rs_samples refs = {NULL, 0, 0};
        bool complete = true;
        w->first_step = hi + 1 - W;
        w->t0 = UINT64_MAX;
        if (!(w->r = calloc(c->n_ranks, sizeof *w->r)))
            return -ENOMEM;
        for (size_t i = 0; i < c->n_ranks; i++) {
            const struct rs_rank_steps *rk = &c->ranks[i];
            struct rank_window *rw = &w->r[i];
            for (size_t k = 0; k < rk->n; k++) {
                if (!in_window(rk->steps[k].step, hi, W))
                    continue;
                rw->steps++;
                if (rk->steps[k].start_ns < w->t0)
                    w->t0 = rk->steps[k].start_ns;
                if (rk->steps[k].end_ns > w->t1)
                    w->t1 = rk->steps[k].end_ns;
            }
            if (rw->steps < W / 2) {
                complete = false;
                break;
            }
            rw->work_ms = median_of(rk->steps, rk->n, hi, W, 0);
            rw->compute_ms = median_of(rk->steps, rk->n, hi, W, 1);
            rw->host_gap_ms = median_of(rk->steps, rk->n, hi, W, 2);
            rw->step_ms = median_of(rk->steps, rk->n, hi, W, 3);
            rw->kernels = median_of(rk->steps, rk->n, hi, W, 4);
            rs_samples_add(&refs, rw->work_ms);
        }
        if (!complete) { /* a window some rank barely covers ends the lookback */
            free(w->r);
            w->r = NULL;
            rs_samples_fini(&refs);
            break;
        }
        /* Each rank against the median of its peers: with 2 ranks the median of all is their mean,
         * which would halve a straggler's apparent slowdown (measured: a 5% straggler among 2
         * ranks went unseen). For many ranks the two are the same. One sort serves every rank. */
        rs_quantile(refs.v, refs.n, 0.5);
        for (size_t i = 0; i < c->n_ranks; i++) {
            size_t k = rs_lower_bound(refs.v, refs.n, w->r[i].work_ms);
            w->r[i].peers_ms = rs_quantile_sorted_without(refs.v, refs.n, k, 0.5);
        }
        rs_samples_fini(&refs);
        c->n_w = j + 1;
    }
    return 0;
}

static int
on_instance(void *arg, const struct rs_instance *in)
{
    struct ctx *c = arg;
    double waits[64];
    size_t n = 0;

    if (in->n < 2 || in->at_min != 1)
        return 0;
    for (size_t j = 0; j < c->n_w; j++) {
        struct window *w = &c->w[j];
        if (in->min_start_ns < w->t0 || in->min_start_ns >= w->t1)
            continue;
        uint32_t rank = in->members[in->last].rank;
        int32_t idx = rank <= c->max_rank ? c->index_of[rank] : -1;
        w->instances++;
        if (idx < 0)
            return 0;
        for (size_t i = 0; i < in->n && n < 64; i++)
            if (i != in->last)
                waits[n++] = (double)(in->members[i].dur_ns - in->min_dur_ns);
        w->r[idx].last++;
        w->r[idx].impact_ns += rs_quantile(waits, n, 0.5);
        return 0;
    }
    return 0;
}

/* Per kernel name totals of one rank in [t0, t1): count and time. */
struct name_total {
    uint64_t hash;
    char *name;
    uint64_t count, ns;
};

struct names {
    struct name_total *v;
    size_t n;
    uint64_t t0, t1;
};

static int
on_kernel(void *arg, const struct rs_kernel_record *k, const char *name, uint64_t name_hash)
{
    struct names *ns = arg;
    uint64_t h = name_hash;
    size_t i;

    if (k->start_ns < ns->t0 || k->start_ns >= ns->t1)
        return 0;
    for (i = 0; i < ns->n && ns->v[i].hash != h; i++)
        ;
    if (i == ns->n) {
        struct name_total *v = realloc(ns->v, (ns->n + 1) * sizeof *v);
        if (!v || !(name = strdup(name)))
            return -ENOMEM;
        ns->v = v;
        ns->v[ns->n++] = (struct name_total){h, (char *)name, 0, 0};
    }
    ns->v[i].count++;
    ns->v[i].ns += k->end_ns - k->start_ns;
    return 0;
}

static void
names_free(struct names *ns)
{
    for (size_t i = 0; i < ns->n; i++)
        free(ns->v[i].name);
    free(ns->v);
}

struct evidence {
    const char *name;
    double ratio, extra_ms_per_step;
};

/* Compares rank `idx` with its peers, kernel name by kernel name, in window 0: time lost to the
 * same kernels running slower (gpu_slow), and time in kernels the peers do not run as often
 * (extra_work), in ms per step; the top kernels of the larger one as evidence. */
static int
kernel_cause(struct ctx *c, rs_store_read *r, const char *job, size_t idx, double *slow_ms,
             double *extra_ms, json_t **evidence)
{
    struct window *w = &c->w[0];
    struct names *all = calloc(c->n_ranks, sizeof *all);
    struct evidence top[MAX_EVIDENCE] = {{0}};
    double steps = (double)w->r[idx].steps;
    int rc = 0;

    *slow_ms = *extra_ms = 0;
    if (!all)
        return -ENOMEM;
    /* The peers' per-kernel medians from at most CAUSE_PEERS peers spread over the ranks: robust
     * already, and the kernels of 1,000 peers would cost more than the whole verdict. */
    size_t stride = c->n_ranks > CAUSE_PEERS + 1 ? c->n_ranks / CAUSE_PEERS : 1;
    for (size_t i = 0; i < c->n_ranks && rc == 0; i++) {
        if (i != idx && i % stride != 0)
            continue;
        all[i].t0 = w->t0;
        all[i].t1 = w->t1;
        rc = rs_store_kernels_scan(r, job, c->ranks[i].rank,
                                   w->t0 > SCAN_MARGIN_NS ? w->t0 - SCAN_MARGIN_NS : 0, w->t1,
                                   on_kernel, &all[i]);
    }
    for (size_t k = 0; rc == 0 && k < all[idx].n; k++) {
        const struct name_total *mine = &all[idx].v[k];
        struct rs_samples mean = {NULL, 0, 0}, count = {NULL, 0, 0};
        for (size_t i = 0; i < c->n_ranks; i++) {
            if (i == idx || i % stride != 0)
                continue;
            double cnt = 0, t = 0;
            for (size_t q = 0; q < all[i].n; q++)
                if (all[i].v[q].hash == mine->hash) {
                    cnt = (double)all[i].v[q].count;
                    t = (double)all[i].v[q].ns;
                }
            rs_samples_add(&count, cnt * steps / (double)(w->r[i].steps ? w->r[i].steps : 1));
            if (cnt > 0)
                rs_samples_add(&mean, t / cnt);
        }
        double my_mean = (double)mine->ns / (double)mine->count;
        double peer_mean = mean.n ? rs_quantile(mean.v, mean.n, 0.5) : 0;
        double peer_count = rs_quantile(count.v, count.n, 0.5);
        double shared = peer_count < (double)mine->count ? peer_count : (double)mine->count;
        double slow = peer_mean > 0 ? shared * (my_mean - peer_mean) / 1e6 / steps : 0;
        double extra = ((double)mine->count - shared) * my_mean / 1e6 / steps;
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
    json_t *list = json_array();
    for (size_t e = 0; list && e < MAX_EVIDENCE && top[e].name; e++)
        if (top[e].extra_ms_per_step > 0)
            json_array_append_new(list, json_pack("{s:s, s:f, s:f}", "kernel", top[e].name,
                                                  "ratio_to_peers", top[e].ratio,
                                                  "extra_ms_per_step", top[e].extra_ms_per_step));
    *evidence = list;
    for (size_t i = 0; i < c->n_ranks; i++)
        names_free(&all[i]);
    free(all);
    return rc;
}

static double
peer_median(struct ctx *c, size_t idx, size_t offset)
{
    struct rs_samples s = {NULL, 0, 0};
    for (size_t i = 0; i < c->n_ranks; i++)
        if (i != idx)
            rs_samples_add(&s, *(const double *)((const char *)&c->w[0].r[i] + offset));
    double m = rs_quantile(s.v, s.n, 0.5);
    rs_samples_fini(&s);
    return m;
}

static bool
qualifies(const struct ctx *c, size_t j, size_t i)
{
    const struct rank_window *rw = &c->w[j].r[i];
    double slowdown = rw->peers_ms > 0 ? rw->work_ms / rw->peers_ms : 1.0;
    double last_frac = c->w[j].instances ? (double)rw->last / (double)c->w[j].instances : 0;
    return slowdown - 1.0 >= c->o->threshold && last_frac >= c->o->min_last_frac;
}

struct identity {
    uint32_t rank;
    char host[RS_STORE_HOST_MAX], gpu[RS_STORE_UUID_MAX];
};

struct identities {
    struct identity *v;
    size_t n;
};

static int
on_rank_info(void *arg, const struct rs_rank_info *info)
{
    struct identities *ids = arg;
    struct identity *v = realloc(ids->v, (ids->n + 1) * sizeof *v);
    if (!v)
        return -ENOMEM;
    ids->v = v;
    v[ids->n].rank = info->rank;
    snprintf(v[ids->n].host, sizeof v[ids->n].host, "%s", info->host);
    snprintf(v[ids->n].gpu, sizeof v[ids->n].gpu, "%s", info->gpu_uuid);
    ids->n++;
    return 0;
}

static json_t *
verdict(struct ctx *c, rs_store_read *r, const char *job, size_t idx, const struct identities *ids,
        size_t run)
{
    const struct rank_window *rw = &c->w[0].r[idx];
    double slowdown = rw->peers_ms > 0 ? rw->work_ms / rw->peers_ms : 1.0;
    double last_frac = (double)rw->last / (double)c->w[0].instances;
    double impact_ns = 0, wall_ns = 0, best = rw->work_ms, min_work = rw->work_ms;
    double slow_ms, extra_ms,
        host_ms = rw->host_gap_ms - peer_median(c, idx, offsetof(struct rank_window, host_gap_ms));
    json_t *evidence = NULL;
    const char *cause = "unknown";
    const struct identity *id = NULL;

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
    for (size_t i = 0; i < ids->n; i++)
        if (ids->v[i].rank == c->ranks[idx].rank)
            id = &ids->v[i];
    if (kernel_cause(c, r, job, idx, &slow_ms, &extra_ms, &evidence) != 0)
        return NULL;
    if (host_ms >= slow_ms && host_ms >= extra_ms && host_ms > 0) {
        cause = "host_side";
        json_decref(evidence);
        evidence = json_pack("[{s:f, s:f}]", "host_gap_ms", rw->host_gap_ms, "peers_host_gap_ms",
                             rw->host_gap_ms - host_ms);
    } else if (slow_ms >= extra_ms && slow_ms > 0)
        cause = "gpu_slow";
    else if (extra_ms > 0)
        cause = "extra_work";
    double impact_pct = wall_ns > 0 ? 100.0 * lost_ms * 1e6 / wall_ns : 0;
    double margin = (slowdown - 1.0) / (2 * c->o->threshold);
    double confidence =
        (margin < 1 ? margin : 1) * last_frac * (run >= 2 * c->o->windows_required ? 1.0 : 0.8);
    const char *action =
        strcmp(cause, "gpu_slow") == 0 && impact_pct >= 5 ? "drain-candidate" : "observe";
    return json_pack(
        "{s:I, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:s, s:o, s:{s:f, s:f, s:f}, s:I, s:I, s:I, "
        "s:f, s:{s:f, s:f}, s:s}",
        "rank", (json_int_t)c->ranks[idx].rank, "host", id ? id->host : "", "gpu_uuid",
        id ? id->gpu : "", "slowdown", slowdown, "last_frac", last_frac, "impact_s", lost_ms / 1e3,
        "impact_pct", impact_pct, "peer_wait_s", impact_ns / 1e9, "cause", cause, "evidence",
        evidence ? evidence : json_array(), "excess_ms_per_step", "gpu_slow", slow_ms, "extra_work",
        extra_ms, "host_side", host_ms, "since_step", (json_int_t)c->w[run - 1].first_step,
        "since_ns", (json_int_t)c->w[run - 1].t0, "windows", (json_int_t)run, "confidence",
        confidence < 0 ? 0.0 : confidence, "scores", "relative", min_work / rw->work_ms,
        "individual", best / rw->work_ms, "action", action);
}

int
rs_query_stragglers(rs_store_read *r, const char *job, const struct rs_straggler_options *opts,
                    json_t **out)
{
    struct rs_straggler_options defaults;
    const struct rs_straggler_options *o = opts;
    if (!o) {
        rs_straggler_options_default(&defaults);
        o = &defaults;
    }
    struct ctx c = {o, NULL, 0, NULL, 0, 0, NULL};
    struct identities ids = {NULL, 0};
    json_t *verdicts = json_array(), *ranks = json_array();
    char summary[256];
    int rc;

    if (!verdicts || !ranks) {
        rc = -ENOMEM;
        goto out;
    }
    if ((rc = rs_query_job_steps(r, job, o->window_steps * o->lookback_windows, &c.ranks,
                                 &c.n_ranks)) ||
        (rc = rs_store_ranks_scan(r, job, on_rank_info, &ids)) || (rc = build_windows(&c)))
        goto out;
    for (size_t i = 0; i < c.n_ranks; i++)
        if (c.ranks[i].rank > c.max_rank)
            c.max_rank = c.ranks[i].rank;
    if (c.n_w > 0) {
        if (!(c.index_of = malloc((c.max_rank + 1) * sizeof *c.index_of))) {
            rc = -ENOMEM;
            goto out;
        }
        memset(c.index_of, 0xff, (c.max_rank + 1) * sizeof *c.index_of);
        for (size_t i = 0; i < c.n_ranks; i++)
            c.index_of[c.ranks[i].rank] = (int32_t)i;
        uint64_t t0 = c.w[c.n_w - 1].t0, t1 = c.w[0].t1; /* the windows, oldest to newest */
        if ((rc = rs_instances_scan_range(r, job, t0, t1, on_instance, &c)) != 0)
            goto out;
    }
    if (c.n_ranks < 2 || c.n_w < o->windows_required) {
        snprintf(summary, sizeof summary,
                 "not enough data: %zu ranks, %zu complete windows of %zu steps (need 2 ranks and "
                 "%u windows)",
                 c.n_ranks, c.n_w, o->window_steps, o->windows_required);
    } else {
        double lo = 1e300, hi = 0;
        for (size_t i = 0; i < c.n_ranks; i++) {
            const struct rank_window *rw = &c.w[0].r[i];
            double slowdown = rw->peers_ms > 0 ? rw->work_ms / rw->peers_ms : 1.0;
            double last_frac = c.w[0].instances ? (double)rw->last / (double)c.w[0].instances : 0;
            size_t run = 0;
            lo = slowdown < lo ? slowdown : lo;
            hi = slowdown > hi ? slowdown : hi;
            json_array_append_new(ranks,
                                  json_pack("{s:I, s:f, s:f}", "rank", (json_int_t)c.ranks[i].rank,
                                            "slowdown", slowdown, "last_frac", last_frac));
            while (run < c.n_w && qualifies(&c, run, i))
                run++;
            if (run >= o->windows_required) {
                json_t *v = verdict(&c, r, job, i, &ids, run);
                if (!v) {
                    rc = -ENOMEM;
                    goto out;
                }
                json_array_append_new(verdicts, v);
            }
        }
        if (json_array_size(verdicts) == 0)
            snprintf(summary, sizeof summary,
                     "no straggler: per-rank compute + host gap within %.1f%% .. %+.1f%% of the "
                     "median over the last %zu steps",
                     100 * (lo - 1), 100 * (hi - 1), o->window_steps);
        else
            snprintf(summary, sizeof summary, "%zu straggler(s)", json_array_size(verdicts));
    }
    *out =
        json_pack("{s:s, s:I, s:I, s:f, s:s, s:O, s:O}", "job", job, "window_steps",
                  (json_int_t)o->window_steps, "windows_evaluated", (json_int_t)c.n_w, "threshold",
                  o->threshold, "summary", summary, "stragglers", verdicts, "ranks", ranks);
    rc = *out ? 0 : -ENOMEM;
out:
    json_decref(verdicts);
    json_decref(ranks);
    for (size_t j = 0; c.w && j < o->lookback_windows; j++)
        free(c.w[j].r);
    free(c.w);
    free(c.index_of);
    free(ids.v);
    rs_job_steps_free(c.ranks, c.n_ranks);
    return rc;
}
