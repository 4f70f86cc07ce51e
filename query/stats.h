/* Order statistics for the analyses: quantiles of a sample, with the same interpolation
 * everywhere (linear between closest ranks, as numpy's default), so p50/p95 mean one thing. */
#ifndef RS_QUERY_STATS_H
#define RS_QUERY_STATS_H

#include <stddef.h>
#include <stdint.h>

/* The q-quantile (0 <= q <= 1) of v[0..n); sorts v in place. 0 when n == 0. */
double rs_quantile(double *v, size_t n, double q);

/* The median of v[0..n) — the same value as rs_quantile(v, n, 0.5) — by selection in O(n)
 * expected time instead of a sort; reorders v. 0 when n == 0. */
double rs_median(double *v, size_t n);

/* The q-quantile of sorted[0..n) with the element at index k left out (n >= 2; k < n): "the
 * median of the other ranks" for every rank from one sort, O(1) each. */
double rs_quantile_sorted_without(const double *sorted, size_t n, size_t k, double q);

/* The index of the first element >= x in sorted[0..n) (n when none). */
size_t rs_lower_bound(const double *sorted, size_t n, double x);

/* The index of the first of n elements of `size` bytes from v, sorted by key(element), whose key
 * is >= x (n when none): the one binary search for arrays of structs (steps by number, identities
 * by rank). */
size_t rs_lower_bound_by(const void *v, size_t n, size_t size, uint64_t (*key)(const void *),
                         uint64_t x);

/* A growable array of doubles. */
struct rs_samples {
    double *v;
    size_t n, cap;
};

/* Appends x; returns 0 or -ENOMEM. */
int rs_samples_add(struct rs_samples *s, double x);
void rs_samples_fini(struct rs_samples *s);

#endif
