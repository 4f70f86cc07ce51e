/* Step inference from the period of the kernel-name sequence (see kernel_period.h). */
#include "query/kernel_period.h"

#include "query/stats.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SAMPLES 65536  /* positions compared per candidate period (strided beyond) */
#define MAX_K 4            /* occurrences of one name per step considered for candidates */
#define SHIFT_IDLE_NS 5000 /* an idle near the expected first kernel must exceed 2x its + this */

struct occ {
    uint32_t name, idx;
};

static int
by_name_idx(const void *a, const void *b)
{
    const struct occ *x = a, *y = b;
    if (x->name != y->name)
        return x->name < y->name ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int
by_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Share of (strided) positions i whose name equals that of i + p. */
static double
match_at(const uint32_t *sym, size_t n, size_t p)
{
    size_t span = n - p, stride = span > MAX_SAMPLES ? span / MAX_SAMPLES : 1, same = 0, all = 0;
    for (size_t i = 0; i < span; i += stride, all++)
        same += sym[i] == sym[i + p];
    return all ? (double)same / (double)all : 0;
}

/* The median distance between occurrences j and j + k of one name (o[0..c) in index order). */
static double
median_distance(const struct occ *o, size_t c, size_t k, double *scratch)
{
    size_t m = 0;
    for (size_t j = 0; j + k < c; j++)
        scratch[m++] = (double)(o[j + k].idx - o[j].idx);
    return rs_median(scratch, m);
}

struct work {
    uint32_t *sym;   /* dense name per kernel */
    struct occ *occ; /* (name, index) sorted: each name's occurrences in index order */
    uint64_t *idle;  /* GPU idle before kernel i (0 for the first) */
    uint64_t *bound; /* where a step starting at kernel i would start */
    uint32_t *cands; /* candidate periods */
    double *scratch;
};

static void
work_free(struct work *w)
{
    free(w->sym);
    free(w->occ);
    free(w->idle);
    free(w->bound);
    free(w->cands);
    free(w->scratch);
}

/* Dense names, occurrences, and the idle before each kernel (over every stream: the GPU idles
 * when no earlier-launched kernel is still running). */
static void
prepare(struct work *w, const struct rs_kernel_record *k, size_t n)
{
    for (size_t i = 0; i < n; i++)
        w->occ[i] = (struct occ){k[i].name_id, (uint32_t)i};
    qsort(w->occ, n, sizeof *w->occ, by_name_idx);
    uint32_t dense = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && w->occ[i].name != w->occ[i - 1].name)
            dense++;
        w->sym[w->occ[i].idx] = dense;
    }
    uint64_t end = 0;
    for (size_t i = 0; i < n; i++) {
        w->idle[i] = i > 0 && k[i].start_ns > end ? k[i].start_ns - end : 0;
        w->bound[i] = i > 0 && end < k[i].start_ns ? end : k[i].start_ns;
        if (k[i].end_ns > end)
            end = k[i].end_ns;
    }
}

/* Candidate periods from every name's occurrence distances; returns how many (sorted, unique). */
static size_t
candidates(struct work *w, size_t n, size_t max_p)
{
    size_t m = 0;
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && w->occ[b].name == w->occ[a].name;)
            b++;
        size_t c = b - a;
        for (size_t kk = 1; kk <= MAX_K && c >= RS_KPERIOD_MIN_PERIODS + kk - 1; kk++) {
            double d = median_distance(&w->occ[a], c, kk, w->scratch);
            if (d >= 1 && d <= (double)max_p)
                w->cands[m++] = (uint32_t)(d + 0.5);
        }
    }
    qsort(w->cands, m, sizeof *w->cands, by_u32);
    size_t u = 0;
    for (size_t i = 0; i < m; i++)
        if (u == 0 || w->cands[i] != w->cands[u - 1])
            w->cands[u++] = w->cands[i];
    return u;
}

/* The anchor for period p: a name seen once per period (median distance p, within 5%), after the
 * longest median idle. Returns the index of its first occurrence in w->occ and *count, or
 * SIZE_MAX. */
static size_t
anchor(struct work *w, size_t n, size_t p, size_t *count)
{
    double best = -1;
    size_t best_at = SIZE_MAX, best_c = 0, tol = p / 20 ? p / 20 : 1;

    for (size_t a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && w->occ[b].name == w->occ[a].name;)
            b++;
        size_t c = b - a;
        if (c < RS_KPERIOD_MIN_PERIODS)
            continue;
        double d = median_distance(&w->occ[a], c, 1, w->scratch);
        if (d + (double)tol < (double)p || d > (double)(p + tol))
            continue;
        for (size_t j = 0; j < c; j++)
            w->scratch[j] = (double)w->idle[w->occ[a + j].idx];
        double idle = rs_median(w->scratch, c);
        if (idle > best || (idle == best && c > best_c)) {
            best = idle;
            best_at = a;
            best_c = c;
        }
    }
    *count = best_c;
    return best_at;
}

int
rs_kernel_period_steps(const struct rs_kernel_record *k, size_t n, struct rs_step_record **steps,
                       size_t *n_steps, struct rs_kernel_period *out)
{
    struct work w = {0};
    struct rs_step_record *v = NULL;
    struct rs_kernel_period res = {0};
    size_t m = 0, max_p = n / RS_KPERIOD_MIN_PERIODS;
    int rc = -ENOMEM;

    if (max_p > RS_KPERIOD_MAX_PERIOD)
        max_p = RS_KPERIOD_MAX_PERIOD;
    if (n < 2 * RS_KPERIOD_MIN_PERIODS || max_p < 1) {
        rc = 0;
        goto done;
    }
    w.sym = malloc(n * sizeof *w.sym);
    w.occ = malloc(n * sizeof *w.occ);
    w.idle = malloc(n * sizeof *w.idle);
    w.bound = malloc(n * sizeof *w.bound);
    w.cands = malloc(n * MAX_K * sizeof *w.cands);
    w.scratch = malloc(n * sizeof *w.scratch);
    if (!w.sym || !w.occ || !w.idle || !w.bound || !w.cands || !w.scratch)
        goto fail;
    prepare(&w, k, n);
    size_t nc = candidates(&w, n, max_p);
    double best = 0, *score = w.scratch; /* one score per candidate (nc <= n) */
    for (size_t i = 0; i < nc; i++) {
        score[i] = match_at(w.sym, n, w.cands[i]);
        best = score[i] > best ? score[i] : best;
    }
    size_t p = 0;
    for (size_t i = 0; i < nc && !p; i++)
        if (score[i] >= RS_KPERIOD_MATCH && score[i] >= best - RS_KPERIOD_TIE) {
            p = w.cands[i];
            res.match = score[i];
        }
    size_t count = 0, at = p ? anchor(&w, n, p, &count) : SIZE_MAX;
    if (at == SIZE_MAX) {
        res.match = 0;
        rc = 0;
        goto done;
    }
    if (!(v = malloc(count * sizeof *v)))
        goto fail;
    /* the step's first kernel: the offset from the anchor (within one period) after which the
     * GPU idles longest (median over the anchor's occurrences) */
    size_t first = 0;
    double best_idle = -1;
    for (size_t d = 0; d < p; d++) {
        size_t c = 0;
        for (size_t j = 0; j < count; j++) {
            size_t i = w.occ[at + j].idx + d;
            if (i < n)
                w.scratch[c++] = (double)w.idle[i];
        }
        double idle = rs_median(w.scratch, c);
        if (c >= RS_KPERIOD_MIN_PERIODS && idle > best_idle) {
            best_idle = idle;
            first = d;
        }
    }
    /* steps from one boundary to the next; an anchor closer than half a period to the last kept
     * one is a varying kernel, not a step; around the expected first kernel the longest idle
     * decides (a kernel inserted or dropped before it moves it by one) */
    uint64_t prev = 0;
    size_t last = 0;
    bool have = false;
    for (size_t j = 0; j < count; j++) {
        size_t idx = w.occ[at + j].idx, f = idx + first;
        if ((have && idx - last < p / 2) || f >= n)
            continue;
        size_t lo = f >= 2 ? f - 2 : 0, hi = f + 2 < n ? f + 2 : n - 1;
        size_t at_f = f;
        for (size_t i = lo; i <= hi; i++) /* clearly longer: a kernel inserted or dropped */
            if (w.idle[i] > 2 * w.idle[at_f] + SHIFT_IDLE_NS && w.idle[i] > w.idle[f])
                f = i;
        if (have && w.bound[f] > prev) {
            v[m] = (struct rs_step_record){.step = m + 1, .start_ns = prev, .end_ns = w.bound[f]};
            m++;
        }
        prev = w.bound[f];
        last = idx;
        have = true;
    }
    for (size_t j = 0; j < m; j++)
        w.scratch[j] = (double)(v[j].end_ns - v[j].start_ns);
    res.kernels_per_step = m ? (uint32_t)p : 0;
    res.step_ns = m ? (uint64_t)rs_median(w.scratch, m) : 0;
    res.anchor_name_id = k[w.occ[at].idx].name_id;
    if (!m) {
        free(v);
        v = NULL;
        res = (struct rs_kernel_period){0};
    }
    rc = 0;
done:
    *steps = v;
    *n_steps = m;
    *out = res;
    work_free(&w);
    return rc;
fail:
    free(v);
    work_free(&w);
    return rc;
}

/* Names of copies by kind (on_copy): hashes no kernel name is likely to have. */
#define COPY_NAME_BASE 0xc0b1e5c0b1e50000ull

/* The newest RS_KPERIOD_MAX_KERNELS kernels of the window, in a ring. */
struct ring {
    struct rs_kernel_record *v;
    size_t n, head; /* head: the oldest when full */
    uint64_t t0;
};

static int
on_kernel(void *arg, const struct rs_kernel_record *k, const char *name, uint64_t name_hash)
{
    struct ring *g = arg;
    (void)name;
    if (k->start_ns < g->t0)
        return 0;
    struct rs_kernel_record rec = *k;
    rec.name_id = (uint32_t)(name_hash ^ (name_hash >> 32)); /* equal names, equal ids */
    if (g->n < RS_KPERIOD_MAX_KERNELS) {
        g->v[g->n++] = rec;
    } else {
        g->v[g->head] = rec;
        g->head = (g->head + 1) % RS_KPERIOD_MAX_KERNELS;
    }
    return 0;
}

/* GPU copies and memsets take part as kernels of their kind: they repeat every step too, and
 * the GPU is busy while they run (host-side records are left out). */
static int
on_copy(void *arg, const struct rs_memcpy_record *m)
{
    if (rs_copy_kind_is_host_side(m->kind))
        return 0;
    struct rs_kernel_record k = {m->start_ns, m->end_ns, 0, m->stream, 0, 0};
    return on_kernel(arg, &k, "", COPY_NAME_BASE + m->kind);
}

static int
by_start(const void *a, const void *b)
{
    uint64_t x = ((const struct rs_kernel_record *)a)->start_ns;
    uint64_t y = ((const struct rs_kernel_record *)b)->start_ns;
    return x < y ? -1 : x > y;
}

int
rs_kernel_period_rank_steps(rs_store_read *r, const char *job, uint64_t last_ns, size_t last_steps,
                            uint64_t until_step, struct rs_rank_steps *rk)
{
    struct ring g = {malloc(RS_KPERIOD_MAX_KERNELS * sizeof *g.v), 0, 0,
                     last_ns > RS_KPERIOD_WINDOW_NS ? last_ns - RS_KPERIOD_WINDOW_NS : 0};
    struct rs_step_record *st = NULL;
    struct rs_kernel_period kp;
    size_t n = 0;
    int rc;

    if (!g.v)
        return -ENOMEM;
    rc = rs_store_kernels_scan(r, job, rk->rank, rs_store_kernel_scan_from(g.t0), last_ns + 1,
                               on_kernel, &g);
    if (rc == 0)
        rc = rs_store_memcpys_scan(r, job, rk->rank, rs_store_kernel_scan_from(g.t0), last_ns + 1,
                                   on_copy, &g);
    if (rc == 0) {
        /* the ring in time order: chunks are scanned in order, records within them too, but
         * streams interleave */
        if (g.head) {
            struct rs_kernel_record *lin = malloc(g.n * sizeof *lin);
            if (!lin) {
                rc = -ENOMEM;
                goto out;
            }
            memcpy(lin, g.v + g.head, (g.n - g.head) * sizeof *lin);
            memcpy(lin + (g.n - g.head), g.v, g.head * sizeof *lin);
            free(g.v);
            g.v = lin;
        }
        qsort(g.v, g.n, sizeof *g.v, by_start);
        rc = rs_kernel_period_steps(g.v, g.n, &st, &n, &kp);
    }
    if (rc != 0)
        goto out;
    while (n > 0 && st[n - 1].step > until_step)
        n--;
    size_t keep = last_steps && n > last_steps ? last_steps : n;
    struct rs_step_summary *v = keep ? calloc(keep, sizeof *v) : NULL;
    if (keep && !v) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t k = 0; k < keep; k++) {
        const struct rs_step_record *sr = &st[n - keep + k];
        v[k] = (struct rs_step_summary){
            .step = sr->step, .start_ns = sr->start_ns, .end_ns = sr->end_ns};
    }
    rk->steps = v;
    rk->n = keep;
    rk->inferred_period = keep ? kp.kernels_per_step : 0;
    rk->kernel_period = keep > 0;
out:
    free(st);
    free(g.v);
    return rc;
}
