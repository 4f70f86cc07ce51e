/* Unit tests of the heatmap's binning (query/heatmap.h) on hand-built steps: column bounds when
 * the steps do not divide evenly, means per column, a rank missing steps (null cells), the
 * slowest rank and median per column, ranks with no steps at all, and metric names. */
#include "query/heatmap.h"
#include "tests/t.h"

#include <math.h>
#include <string.h>

#define MS 1000000ull

/* rank r: steps first..last, step_ns = (base + step) ms, compute = step / 2 ms */
static void
fill(struct rs_step_summary *v, uint64_t first, uint64_t last, uint64_t base)
{
    for (uint64_t s = first; s <= last; s++) {
        struct rs_step_summary *x = &v[s - first];
        memset(x, 0, sizeof *x);
        x->step = s;
        x->start_ns = 1000 * MS + s * 100 * MS;
        x->step_ns = (base + s) * MS;
        x->compute_ns = s * MS / 2;
    }
}

static double
num(json_t *a, size_t i)
{
    return json_real_value(json_array_get(a, i));
}

static void
binning(void)
{
    struct rs_step_summary a[10], b[10], c[4];
    fill(a, 0, 9, 100);
    fill(b, 0, 9, 200); /* rank 1: 100 ms slower everywhere */
    fill(c, 3, 6, 100); /* rank 7: steps 3..6 only */
    struct rs_rank_steps ranks[3] = {{.rank = 0, .steps = a, .n = 10},
                                     {.rank = 1, .steps = b, .n = 10},
                                     {.rank = 7, .steps = c, .n = 4}};
    json_t *d = rs_heatmap_json("j", ranks, 3, RS_HEATMAP_STEP, 4);

    T_CHECK(d != NULL);
    if (!d)
        return;
    /* 10 steps into at most 4 columns: 3 per column -> 0-2, 3-5, 6-8, 9 */
    T_EQ(json_integer_value(json_object_get(d, "steps_per_column")), 3);
    json_t *cols = json_object_get(d, "columns"), *values = json_object_get(d, "values");
    T_EQ(json_array_size(cols), 4);
    T_EQ(json_integer_value(json_object_get(json_array_get(cols, 3), "first_step")), 9);
    T_EQ(json_integer_value(json_object_get(json_array_get(cols, 3), "last_step")), 9);
    T_EQ(json_integer_value(json_object_get(json_array_get(cols, 1), "start_ns")),
         (json_int_t)(1000 * MS + 3 * 100 * MS));
    /* rank 0, column 1: steps 3,4,5 -> mean 104 ms; rank 1 the same + 100 */
    json_t *r0 = json_array_get(values, 0), *r1 = json_array_get(values, 1),
           *r7 = json_array_get(values, 2);
    T_CHECK(fabs(num(r0, 1) - 104.0) < 1e-9);
    T_CHECK(fabs(num(r1, 1) - 204.0) < 1e-9);
    /* rank 7: nothing in column 0, steps 3,4,5 in 1, step 6 alone in 2, nothing in 3 */
    T_CHECK(json_is_null(json_array_get(r7, 0)) && json_is_null(json_array_get(r7, 3)));
    T_CHECK(fabs(num(r7, 2) - 106.0) < 1e-9);
    /* column 1: values 104, 204, 104 -> median 104, slowest rank 1; column 0 has two ranks */
    json_t *c1 = json_array_get(cols, 1), *c0 = json_array_get(cols, 0);
    T_CHECK(fabs(json_real_value(json_object_get(c1, "median_ms")) - 104.0) < 1e-9);
    T_EQ(json_integer_value(json_object_get(c1, "max_rank")), 1);
    T_CHECK(fabs(json_real_value(json_object_get(c1, "max_ms")) - 204.0) < 1e-9);
    T_CHECK(fabs(json_real_value(json_object_get(c0, "median_ms")) - 151.0) < 1e-9);
    T_EQ(json_integer_value(json_array_get(json_object_get(d, "ranks"), 2)), 7);
    json_decref(d);

    /* another metric; one column per step when columns exceed the steps */
    d = rs_heatmap_json("j", ranks, 3, RS_HEATMAP_COMPUTE, 1000);
    T_EQ(json_integer_value(json_object_get(d, "steps_per_column")), 1);
    T_EQ(json_array_size(json_object_get(d, "columns")), 10);
    T_CHECK(fabs(num(json_array_get(json_object_get(d, "values"), 0), 9) - 4.5) < 1e-9);
    T_CHECK(strcmp(json_string_value(json_object_get(d, "metric")), "compute_ms") == 0);
    json_decref(d);

    /* a single column holds everything */
    d = rs_heatmap_json("j", ranks, 3, RS_HEATMAP_STEP, 1);
    T_EQ(json_integer_value(json_object_get(d, "steps_per_column")), 10);
    T_CHECK(fabs(num(json_array_get(json_object_get(d, "values"), 0), 0) - 104.5) < 1e-9);
    json_decref(d);
}

static void
no_steps(void)
{
    struct rs_rank_steps ranks[2] = {{.rank = 0}, {.rank = 1}};
    json_t *d = rs_heatmap_json("j", ranks, 2, RS_HEATMAP_IDLE, 200);

    T_CHECK(d != NULL);
    T_EQ(json_array_size(json_object_get(d, "columns")), 0);
    T_CHECK(json_is_null(json_object_get(d, "first_step")));
    T_EQ(json_array_size(json_object_get(d, "values")), 2);
    T_EQ(json_array_size(json_array_get(json_object_get(d, "values"), 1)), 0);
    json_decref(d);
    d = rs_heatmap_json("j", NULL, 0, RS_HEATMAP_IDLE, 200);
    T_CHECK(d != NULL && json_array_size(json_object_get(d, "ranks")) == 0);
    json_decref(d);
}

static void
metric_names(void)
{
    for (int m = 0; m < RS_HEATMAP_METRICS; m++)
        T_EQ(rs_heatmap_metric_of(rs_heatmap_metric_name(m)), m);
    T_EQ(rs_heatmap_metric_of("step"), -1);
    T_EQ(rs_heatmap_metric_of(""), -1);
    T_EQ(rs_heatmap_metric_of("STEP_MS"), -1);
    T_EQ(rs_heatmap_metric_of("step_ms "), -1);
}

int
main(void)
{
    T_RUN(binning);
    T_RUN(no_steps);
    T_RUN(metric_names);
    return T_DONE("query/heatmap");
}
