/* Step metrics from interval unions (see step_metrics.h). Each step reads only the intervals that
 * can reach it (binary search on start, bounded by the longest interval), so measuring every step
 * of a rank costs O(n log n). */
#include "common/step_metrics.h"

#include "common/array.h"

#include <errno.h>
#include <stdlib.h>

void
rs_intervals_fini(struct rs_intervals *iv)
{
    free(iv->v);
    *iv = (struct rs_intervals){0};
}

void
rs_intervals_clear(struct rs_intervals *iv)
{
    iv->n = 0;
    iv->longest = 0;
    iv->unsorted = false;
}

int
rs_intervals_add(struct rs_intervals *iv, uint64_t start_ns, uint64_t end_ns, bool nccl)
{
    if (RS_ARRAY_RESERVE(iv->v, iv->cap, iv->n, 1) != 0)
        return -ENOMEM;
    if (iv->n > 0 && start_ns < iv->v[iv->n - 1].start_ns)
        iv->unsorted = true;
    iv->v[iv->n++] = (struct rs_interval){start_ns, end_ns, nccl};
    if (end_ns - start_ns > iv->longest)
        iv->longest = end_ns - start_ns;
    return 0;
}

static int
by_start(const void *a, const void *b)
{
    uint64_t x = ((const struct rs_interval *)a)->start_ns;
    uint64_t y = ((const struct rs_interval *)b)->start_ns;
    return x < y ? -1 : x > y;
}

void
rs_intervals_sort(struct rs_intervals *iv)
{
    if (iv->unsorted && iv->n > 1)
        qsort(iv->v, iv->n, sizeof *iv->v, by_start);
    iv->unsorted = false;
}

int
rs_intervals_merge(struct rs_intervals *a, const struct rs_intervals *b)
{
    size_t n = a->n + b->n, i = a->n, j = b->n;

    if (b->n == 0)
        return 0;
    if (RS_ARRAY_RESERVE(a->v, a->cap, a->n, b->n) != 0)
        return -ENOMEM;
    for (size_t k = n; k-- > 0;) /* from the back, in place */
        a->v[k] = j == 0 || (i > 0 && a->v[i - 1].start_ns > b->v[j - 1].start_ns) ? a->v[--i]
                                                                                   : b->v[--j];
    a->n = n;
    if (b->longest > a->longest)
        a->longest = b->longest;
    return 0;
}

void
rs_intervals_drop_before(struct rs_intervals *iv, uint64_t t)
{
    size_t out = 0;

    for (size_t i = 0; i < iv->n; i++)
        if (iv->v[i].end_ns > t)
            iv->v[out++] = iv->v[i];
    iv->n = out;
}

/* Length of the union of the selected intervals clipped to [s, e). `which`: 0 compute only,
 * 1 NCCL only, 2 both. Intervals [lo, hi) are sorted by start. */
static uint64_t
union_len(const struct rs_interval *v, size_t lo, size_t hi, uint64_t s, uint64_t e, int which)
{
    uint64_t total = 0, cs = 0, ce = 0;
    bool open = false;

    for (size_t i = lo; i < hi; i++) {
        if ((which == 0 && v[i].nccl) || (which == 1 && !v[i].nccl))
            continue;
        uint64_t a = v[i].start_ns > s ? v[i].start_ns : s, b = v[i].end_ns < e ? v[i].end_ns : e;
        if (b <= a)
            continue;
        if (open && a <= ce) {
            if (b > ce)
                ce = b;
            continue;
        }
        if (open)
            total += ce - cs;
        cs = a;
        ce = b;
        open = true;
    }
    return total + (open ? ce - cs : 0);
}

void
rs_intervals_measure(const struct rs_intervals *iv, uint64_t s, uint64_t e,
                     struct rs_step_metrics *m)
{
    uint64_t from = s > iv->longest ? s - iv->longest : 0;
    size_t lo = 0, hi = iv->n;

    /* the first interval that may reach into the step, and the first that starts after it */
    for (size_t a = 0, b = iv->n; a < b;) {
        size_t mid = (a + b) / 2;
        if (iv->v[mid].start_ns < from)
            a = lo = mid + 1;
        else
            b = mid;
    }
    for (size_t a = lo, b = iv->n; a < b;) {
        size_t mid = (a + b) / 2;
        if (iv->v[mid].start_ns < e)
            a = mid + 1;
        else
            b = hi = mid;
    }
    uint64_t compute = union_len(iv->v, lo, hi, s, e, 0), comm = union_len(iv->v, lo, hi, s, e, 1),
             busy = union_len(iv->v, lo, hi, s, e, 2), first_start = e;
    m->kernels = 0;
    for (size_t i = lo; i < hi; i++) {
        if (iv->v[i].start_ns >= s && iv->v[i].start_ns < e)
            m->kernels++;
        /* a kernel running since before the step counts as starting with it */
        if (iv->v[i].end_ns > s && iv->v[i].start_ns < first_start)
            first_start = iv->v[i].start_ns > s ? iv->v[i].start_ns : s;
    }
    m->compute_ns = compute;
    m->comm_ns = comm;
    m->exposed_comm_ns = busy - compute;
    m->idle_ns = (e - s) - busy;
    m->host_gap_ns = first_start - s;
}
