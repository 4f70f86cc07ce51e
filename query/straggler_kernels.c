/* The straggler rule's view of kernels (stragglers_int.h): one rank's kernels by name over a window
 * (the cause's evidence compares them), and the kernel speed — how much slower a rank runs the
 * same kernels than its peers, which the step metrics dilute (docs/analysis.md "The rule"). */
#include "query/stragglers_int.h"

#include "common/array.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAD_SIGMA 1.4826 /* MAD x this = the standard deviation, for normal noise */
#define MEDIAN_SE 1.2533 /* the standard error of a median over that of a mean, normal noise */

static int
add_name(struct rs__knames *ns, uint64_t h, const char *name, double count, double total_ns,
         const double *dur)
{
    size_t i;

    for (i = 0; i < ns->n && ns->v[i].hash != h; i++)
        ;
    if (i == ns->n) {
        if (RS_ARRAY_RESERVE(ns->v, ns->cap, ns->n, 1) != 0 || !(name = strdup(name)))
            return -ENOMEM;
        ns->v[ns->n++] = (struct rs__kname){h, (char *)name, 0, 0, 0, 1, {NULL, 0, 0}};
    }
    struct rs__kname *k = &ns->v[i];
    k->count += count;
    k->ns += total_ns;
    if (!dur || !ns->durations)
        return 0;
    /* at most RS__KNAME_DURATIONS durations, spread evenly over the records: past that, every
     * other one kept goes and every (2 x stride)-th record is kept from then on */
    if ((uint64_t)k->records++ % (k->stride ? k->stride : 1) == 0 &&
        rs_samples_add(&k->durs, *dur) != 0)
        return -ENOMEM;
    if (k->durs.n >= RS__KNAME_DURATIONS) {
        for (size_t j = 0; j < k->durs.n / 2; j++)
            k->durs.v[j] = k->durs.v[2 * j];
        k->durs.n /= 2;
        k->stride = 2 * (k->stride ? k->stride : 1);
    }
    return 0;
}

static int
on_kernel(void *arg, const struct rs_kernel_record *k, const char *name, uint64_t name_hash)
{
    struct rs__knames *ns = arg;
    double dur = (double)(k->end_ns - k->start_ns);

    if (k->start_ns < ns->t0 || k->start_ns >= ns->t1)
        return 0;
    return add_name(ns, name_hash, name, 1, dur, &dur);
}

static uint64_t
max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static uint64_t
min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* Kernel windows (agents that summarize kernels, rollups) count with the records: the share of a
 * window's launches that fell into [t0, t1), taking them as spread evenly over the part of the
 * window the rank was active in (a window may be longer than the steps compared). */
static int
on_kernel_window(void *arg, const struct rs_kernel_window *kw, const char *name, uint64_t name_hash)
{
    struct rs__knames *ns = arg;
    uint64_t a = max_u64(kw->start_ns, ns->first_ns),
             b = min_u64(kw->start_ns + kw->window_ns, ns->last_ns);

    ns->windows_end = max_u64(ns->windows_end, kw->start_ns + kw->window_ns);
    uint64_t oa = max_u64(a, ns->t0), ob = min_u64(b, ns->t1);

    if (b <= a || ob <= oa)
        return 0;
    double share = (double)(ob - oa) / (double)(b - a);
    return add_name(ns, name_hash, name, (double)kw->count * share, (double)kw->total_ns * share,
                    NULL);
}

static int
kname_cmp(const void *a, const void *b)
{
    uint64_t x = ((const struct rs__kname *)a)->hash, y = ((const struct rs__kname *)b)->hash;
    return (x > y) - (x < y);
}

int
rs__knames_scan(rs_store_read *r, const char *job, uint32_t rank, struct rs__knames *ns)
{
    int rc = rs_store_kernels_scan(r, job, rank, rs_store_kernel_scan_from(ns->t0), ns->t1,
                                   on_kernel, ns);
    /* agents' windows are at most RS_WIRE_MAX_WINDOW_NS long: read from that far before t0.
     * (Rollup windows may be longer, up to --rollup-window-s, but hold data older than
     * --raw-retention-s, not the newest steps a verdict compares.) */
    if (rc == 0)
        rc = rs_store_kernel_windows_overlapping(r, job, rank, ns->t0, ns->t1,
                                                 RS_WIRE_MAX_WINDOW_NS, on_kernel_window, ns);
    if (rc == 0 && ns->n > 1)
        qsort(ns->v, ns->n, sizeof *ns->v, kname_cmp);
    return rc;
}

const struct rs__kname *
rs__knames_find(const struct rs__knames *ns, uint64_t hash)
{
    size_t lo = 0, hi = ns->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ns->v[mid].hash < hash)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ns->n && ns->v[lo].hash == hash ? &ns->v[lo] : NULL;
}

void
rs__knames_fini(struct rs__knames *ns)
{
    for (size_t i = 0; i < ns->n; i++) {
        free(ns->v[i].name);
        rs_samples_fini(&ns->v[i].durs);
    }
    free(ns->v);
    ns->v = NULL;
    ns->n = ns->cap = 0;
}

/* A name's typical duration on a rank: the median of its records' durations when all its kernels
 * came as records (robust to a few slow steps: spikes), else the mean (windows hold totals). Sorts
 * the durations in place. */
static double
typical(struct rs__kname *k)
{
    if (k->durs.n > 0 && k->records >= k->count)
        return rs_median(k->durs.v, k->durs.n);
    return k->count > 0 ? k->ns / k->count : 0;
}

/* The ratio of all[idx]'s kernels to the median of the peers' (use[p], p != idx) over the names
 * all[idx] ran at least min_count times and at least half of those peers ran at least
 * min_count / 2 times: one ratio per name into ratios, their median into *ratio. scratch holds n
 * doubles. Returns 0 or -ENOMEM. */
static int
speed_against(struct rs__knames *all, const bool *use, size_t n, size_t idx, double min_count,
              double *scratch, struct rs_samples *ratios, double *ratio)
{
    size_t peers = 0;
    for (size_t p = 0; p < n; p++)
        peers += use[p] && p != idx;
    ratios->n = 0;
    for (size_t k = 0; k < all[idx].n; k++) {
        struct rs__kname *mine = &all[idx].v[k];
        size_t m = 0;
        if (mine->count < min_count)
            continue;
        for (size_t p = 0; p < n; p++) {
            if (!use[p] || p == idx)
                continue;
            struct rs__kname *x = (struct rs__kname *)rs__knames_find(&all[p], mine->hash);
            if (x && x->count >= min_count / 2)
                scratch[m++] = typical(x);
        }
        if (m == 0 || 2 * m < peers)
            continue;
        double ref = rs_median(scratch, m), me = typical(mine);
        if (ref > 0 && me > 0 && rs_samples_add(ratios, me / ref) != 0)
            return -ENOMEM;
    }
    /* sorted: the caller reads the ratios after the median */
    *ratio = ratios->n ? rs_quantile(ratios->v, ratios->n, 0.5) : 0;
    return 0;
}

int
rs__kernel_speed(struct rs__knames *all, const bool *use, size_t n, size_t idx, double min_count,
                 struct rs__kernel_speed *out)
{
    struct rs_samples ratios = {NULL, 0, 0};
    double *scratch = malloc((n ? n : 1) * sizeof *scratch);
    struct rs__kernel_speed ks = {0};
    int rc = 0;

    if (!scratch) {
        rc = -ENOMEM;
        goto out;
    }
    if ((rc = speed_against(all, use, n, idx, min_count, scratch, &ratios, &ks.ratio)) != 0)
        goto out;
    ks.names = ratios.n;
    ks.known = ks.names >= RS__KERNEL_SPEED_MIN_NAMES;
    if (ks.known) { /* the names' own disagreement: the standard error of their median */
        for (size_t k = 0; k < ratios.n; k++)
            ratios.v[k] = fabs(ratios.v[k] - ks.ratio);
        ks.se = MEDIAN_SE * MAD_SIGMA * rs_median(ratios.v, ratios.n) / sqrt((double)ratios.n);
    }
    *out = ks;
out:
    rs_samples_fini(&ratios);
    free(scratch);
    return rc;
}
