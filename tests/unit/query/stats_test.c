/* Unit tests of the quantile helpers: known quantiles, and the "without one element" quantile
 * against the brute force (copy without the element, sort, quantile) on random arrays. */
#include "query/stats.h"
#include "tests/t.h"

#include <math.h>
#include <stdlib.h>

static void
known(void)
{
    double v[] = {4, 1, 3, 2};
    T_CHECK(rs_quantile(v, 4, 0.5) == 2.5);
    T_CHECK(rs_quantile(v, 4, 0) == 1 && rs_quantile(v, 4, 1) == 4);
    T_CHECK(rs_quantile(v, 0, 0.5) == 0);
    /* v is sorted now: without 4 -> {1,2,3}: 2; without 1 -> {2,3,4}: 3 */
    T_CHECK(rs_quantile_sorted_without(v, 4, 3, 0.5) == 2);
    T_CHECK(rs_quantile_sorted_without(v, 4, 0, 0.5) == 3);
    T_EQ(rs_lower_bound(v, 4, 2.5), 2);
    T_EQ(rs_lower_bound(v, 4, 9), 4);
}

static void
against_brute_force(void)
{
    srand(7);
    for (int round = 0; round < 2000; round++) {
        size_t n = 2 + (size_t)(rand() % 40), k = (size_t)rand() % n;
        double v[64], rest[64], q = (rand() % 101) / 100.0;
        for (size_t i = 0; i < n; i++)
            v[i] = rand() % 10; /* many ties */
        rs_quantile(v, n, 0.5); /* sorts */
        for (size_t i = 0, j = 0; i < n; i++)
            if (i != k)
                rest[j++] = v[i];
        double want = rs_quantile(rest, n - 1, q), got = rs_quantile_sorted_without(v, n, k, q);
        T_CHECK(fabs(want - got) < 1e-12);
    }
}

static void
median_is_the_quantile(void)
{
    srand(11);
    for (int round = 0; round < 2000; round++) {
        size_t n = 1 + (size_t)(rand() % 40);
        double v[64], w[64];
        for (size_t i = 0; i < n; i++)
            v[i] = w[i] = rand() % 7 + (rand() % 3) * 0.5; /* ties */
        T_CHECK(rs_median(v, n) == rs_quantile(w, n, 0.5));
    }
    T_CHECK(rs_median(NULL, 0) == 0);
    static double same[100000]; /* all equal: must stay linear (a two-way partition is quadratic) */
    for (size_t i = 0; i < 100000; i++)
        same[i] = 1.0;
    T_CHECK(rs_median(same, 100000) == 1.0);
}

int
main(void)
{
    T_RUN(median_is_the_quantile);
    T_RUN(known);
    T_RUN(against_brute_force);
    return T_DONE("query/stats");
}
