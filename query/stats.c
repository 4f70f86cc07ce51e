/* Quantiles and sample arrays (see stats.h). */
#include "query/stats.h"

#include "common/array.h"

#include <errno.h>
#include <stdlib.h>

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double
rs_quantile(double *v, size_t n, double q)
{
    double pos;
    size_t lo;

    if (n == 0)
        return 0.0;
    qsort(v, n, sizeof *v, cmp_double);
    if (q <= 0)
        return v[0];
    if (q >= 1)
        return v[n - 1];
    pos = q * (double)(n - 1);
    lo = (size_t)pos;
    return lo + 1 < n ? v[lo] + (v[lo + 1] - v[lo]) * (pos - (double)lo) : v[lo];
}

static void
swap(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

/* Moves the k-th smallest element to v[k], smaller ones before it, the others after it. A
 * three-way partition, so that runs of equal values (common: identical step times) stay linear. */
static void
select_kth(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n; /* [lo, hi) holds the k-th */

    while (hi - lo > 1) {
        double pivot = v[lo + (hi - lo) / 2];
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) { /* [lo, lt) < pivot, [lt, i) == pivot, [gt, hi) > pivot */
            if (v[i] < pivot)
                swap(&v[lt++], &v[i++]);
            else if (v[i] > pivot)
                swap(&v[i], &v[--gt]);
            else
                i++;
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return; /* v[k] == pivot, in place */
    }
}

double
rs_median(double *v, size_t n)
{
    if (n == 0)
        return 0.0;
    size_t k = (n - 1) / 2;
    select_kth(v, n, k);
    if (n % 2 == 1)
        return v[k];
    double next = v[k + 1]; /* the even case: the mean of the two middle values */
    for (size_t i = k + 2; i < n; i++)
        next = v[i] < next ? v[i] : next;
    return (v[k] + next) / 2;
}

double
rs_quantile_sorted_without(const double *sorted, size_t n, size_t k, double q)
{
    size_t m = n - 1, lo;
    double pos;

    if (n < 2)
        return 0.0;
    q = q < 0 ? 0 : q > 1 ? 1 : q;
    pos = q * (double)(m - 1);
    lo = (size_t)pos;
    /* element j of the array without index k */
    double a = sorted[lo < k ? lo : lo + 1];
    if (lo + 1 >= m)
        return a;
    double b = sorted[lo + 1 < k ? lo + 1 : lo + 2];
    return a + (b - a) * (pos - (double)lo);
}

size_t
rs_lower_bound(const double *sorted, size_t n, double x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (sorted[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t
rs_lower_bound_by(const void *v, size_t n, size_t size, uint64_t (*key)(const void *), uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (key((const char *)v + mid * size) < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int
rs_samples_add(struct rs_samples *s, double x)
{
    if (RS_ARRAY_RESERVE(s->v, s->cap, s->n, 1) != 0)
        return -ENOMEM;
    s->v[s->n++] = x;
    return 0;
}

void
rs_samples_fini(struct rs_samples *s)
{
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}
