/* Unit tests of the heatmap's binning (query/heatmap.h) on hand-built steps: column bounds when
 * the steps do not divide evenly, means per column, a rank missing steps (null cells), the
 * slowest rank and median per column, ranks with no steps at all, and metric names; and the whole
 * job from a store, where older steps come from stored values: measured step records on one rank,
 * stored step summaries on another (with a gap that has neither), against means taken here. */
#include "query/heatmap.h"
#include "tests/store_fixture.h"
#include "tests/t.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
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

#define STEPS 2500u /* more than RS_HEATMAP_AUTO_MAX_STEPS: older steps come from the store */
#define STEP_MS 10u

/* rank 0's measured compute time at step s, rank 1's stored summary's */
static uint64_t
compute0_ns(uint64_t s)
{
    return (2000 + s) * 1000ull;
}

static uint64_t
compute1_ns(uint64_t s)
{
    return (5000 + (s * 7919) % 3000) * 1000ull;
}

/* Rank 1 has no summary for these steps (and no kernels: not measured either). */
static bool
gap1(uint64_t s)
{
    return s >= 100 && s < 200;
}

/* The mean of f over steps a..b, skipping gap1's steps when skip_gap; NAN when none. */
static double
mean_ms(uint64_t (*f)(uint64_t), uint64_t a, uint64_t b, bool skip_gap)
{
    double sum = 0;
    unsigned n = 0;
    for (uint64_t s = a; s <= b; s++)
        if (!(skip_gap && gap1(s))) {
            sum += (double)f(s) / 1e6;
            n++;
        }
    return n ? sum / n : NAN;
}

static json_t *
query_with(rs_store_read *r, uint64_t from, uint64_t to, size_t last, size_t columns,
           rs_heatmap_cache *cache)
{
    json_t *d = NULL;
    struct rs_heatmap_window w = {from, to, last};
    T_EQ(rs_query_heatmap(r, "j", &w, RS_HEATMAP_COMPUTE, columns, cache, &d), 0);
    return d;
}

static json_t *
query(rs_store_read *r, uint64_t from, uint64_t to, size_t last, size_t columns)
{
    return query_with(r, from, to, last, columns, NULL);
}

/* Whether row `rank` of d holds, column by column, the mean of f over the column's steps. */
static bool
columns_match(json_t *d, size_t row, uint64_t (*f)(uint64_t), bool skip_gap)
{
    json_t *cols = json_object_get(d, "columns");
    json_t *vals = json_array_get(json_object_get(d, "values"), row);
    bool ok = json_array_size(cols) > 0;
    for (size_t c = 0; c < json_array_size(cols); c++) {
        json_t *col = json_array_get(cols, c);
        uint64_t a = (uint64_t)json_integer_value(json_object_get(col, "first_step"));
        uint64_t b = (uint64_t)json_integer_value(json_object_get(col, "last_step"));
        double want = mean_ms(f, a, b, skip_gap);
        json_t *v = json_array_get(vals, c);
        if (isnan(want) ? !json_is_null(v) : fabs(json_real_value(v) - want) > 0.0006) /* rounded to the us */ {
            fprintf(stderr, "row %zu column %zu (steps %llu-%llu): %f, want %f\n", row, c,
                    (unsigned long long)a, (unsigned long long)b, json_real_value(v), want);
            ok = false;
        }
    }
    return ok;
}

static void
whole_job_from_store(void)
{
    struct rs_step_record *s0 = calloc(STEPS, sizeof *s0), *s1 = calloc(STEPS, sizeof *s1);
    struct rs_step_summary *sum = calloc(STEPS, sizeof *sum);
    char dir[] = "/tmp/rs-heatmap-XXXXXX";
    size_t n_sum = 0;
    rs_store_read *r;
    rs_store_write *w;

    /* 10 ms steps, long settled (the job's clock starts at 1,000 s) */
    for (uint64_t s = 0; s < STEPS; s++) {
        uint64_t t = 1000000000000ull + s * STEP_MS * 1000000ull;
        s0[s] = (struct rs_step_record){.step = s, .start_ns = t, .end_ns = t + STEP_MS * 1000000ull};
        s1[s] = s0[s];
        s0[s].measured = true; /* as a summarizing agent sends them */
        s0[s].metrics = (struct rs_step_metrics){.compute_ns = compute0_ns(s),
                                                 .idle_ns = STEP_MS * 1000000ull - compute0_ns(s),
                                                 .kernels = 3};
        if (gap1(s) || s >= 2000) /* 2000..: newer than what the server summarized */
            continue;
        sum[n_sum++] = (struct rs_step_summary){.step = s, .start_ns = t, .end_ns = s1[s].end_ns,
                                                .step_ns = STEP_MS * 1000000ull,
                                                .compute_ns = compute1_ns(s),
                                                .idle_ns = STEP_MS * 1000000ull - compute1_ns(s)};
    }
    struct rs_rank_batch rb[2] = {
        {.identity = T_IDENTITY("j", 0, 2, "G0"), T_RECORDS(steps, s0, STEPS)},
        {.identity = T_IDENTITY("j", 1, 2, "G1"), T_RECORDS(steps, s1, STEPS)}};
    rs_store *st = t_store_open(dir, NULL);
    t_store_put(st, rb, 2);
    T_EQ(rs_store_write_begin(st, &w), 0);
    T_EQ(rs_store_step_summaries_put(w, "j", 1, sum, n_sum), 0);
    T_EQ(rs_store_write_commit(w), 0);
    T_EQ(rs_store_read_begin(st, &r), 0);

    /* the whole job: 2,500 steps in at most 25 columns of 100 */
    json_t *d = query(r, 0, UINT64_MAX, 0, 25);
    T_CHECK(d != NULL);
    if (d) {
        T_EQ(json_integer_value(json_object_get(d, "first_step")), 0);
        T_EQ(json_integer_value(json_object_get(d, "last_step")), STEPS - 1);
        T_EQ(json_integer_value(json_object_get(d, "steps_per_column")), 100);
        T_EQ(json_integer_value(json_object_get(d, "last_steps")), RS_HEATMAP_AUTO_MAX_STEPS);
        T_EQ(json_integer_value(json_object_get(d, "exact_rank_steps")),
             2 * RS_HEATMAP_AUTO_MAX_STEPS);
        /* older: rank 0's 1,500 measured, rank 1's 1,400 summaries; rank 1's gap: neither */
        T_EQ(json_integer_value(json_object_get(d, "stored_rank_steps")), 1500 + 1400);
        T_EQ(json_integer_value(json_object_get(d, "rank_steps_without_metrics")), 100);
        T_CHECK(strcmp(json_string_value(json_object_get(d, "window")), "all") == 0);
        T_CHECK(columns_match(d, 0, compute0_ns, false));
        /* rank 1: steps 2000.. have neither summary nor kernels: measured now, 0 compute */
        json_t *v1 = json_array_get(json_object_get(d, "values"), 1);
        T_CHECK(json_is_null(json_array_get(v1, 1))); /* steps 100..199: the gap */
        T_CHECK(fabs(json_real_value(json_array_get(v1, 20))) < 1e-9);
        json_array_remove(v1, 20); /* the rest against the summaries */
        while (json_array_size(v1) > 20)
            json_array_remove(v1, 20);
        json_t *cols = json_object_get(d, "columns");
        while (json_array_size(cols) > 20)
            json_array_remove(cols, 20);
        T_CHECK(columns_match(d, 1, compute1_ns, true));
        json_decref(d);
    }
    /* a window: steps 250..1249 (older and newer than the load's first step 1500 overlap none) */
    d = query(r, 250, 1249, 0, 10);
    if (d) {
        T_EQ(json_integer_value(json_object_get(d, "first_step")), 250);
        T_EQ(json_integer_value(json_object_get(d, "last_step")), 1249);
        T_EQ(json_array_size(json_object_get(d, "columns")), 10);
        T_CHECK(columns_match(d, 0, compute0_ns, false));
        T_CHECK(columns_match(d, 1, compute1_ns, true));
        json_decref(d);
    }
    /* a window across the loaded steps' start: 1450..1549 in one column */
    d = query(r, 1450, 1549, 0, 1);
    if (d) {
        T_EQ(json_integer_value(json_object_get(d, "steps_per_column")), 100);
        T_CHECK(columns_match(d, 0, compute0_ns, false));
        T_CHECK(columns_match(d, 1, compute1_ns, true));
        json_decref(d);
    }
    /* last=N: only the newest N of each rank, nothing from the store's older values */
    d = query(r, 0, UINT64_MAX, 40, 4);
    if (d) {
        T_EQ(json_integer_value(json_object_get(d, "first_step")), STEPS - 40);
        T_EQ(json_integer_value(json_object_get(d, "stored_rank_steps")), 0);
        T_CHECK(strcmp(json_string_value(json_object_get(d, "window")), "last") == 0);
        T_CHECK(columns_match(d, 0, compute0_ns, false));
        json_decref(d);
    }
    /* a window past the job's end: no columns; an unknown job: not found */
    d = query(r, STEPS + 10, UINT64_MAX, 0, 10);
    if (d) {
        T_EQ(json_array_size(json_object_get(d, "columns")), 0);
        json_decref(d);
    }
    struct rs_heatmap_window all = {0, UINT64_MAX, 0};
    T_EQ(rs_query_heatmap(r, "nope", &all, RS_HEATMAP_STEP, 10, NULL, &d), RS_E_NOT_FOUND);

    /* the same whole job through a cache: columns on its bins, the same means; asked again, the
     * same answer; a cache too small for the job reads directly */
    rs_heatmap_cache *cache = rs_heatmap_cache_new(64u << 20), *tiny = rs_heatmap_cache_new(1000);
    json_t *c1 = query_with(r, 0, UINT64_MAX, 0, 25, cache);
    json_t *c2 = query_with(r, 0, UINT64_MAX, 0, 25, cache);
    json_t *t1 = query_with(r, 0, UINT64_MAX, 0, 25, tiny);
    json_t *direct = query(r, 0, UINT64_MAX, 0, 25);
    T_CHECK(c1 && c2 && t1 && direct);
    if (c1 && c2 && t1 && direct) {
        T_CHECK(json_equal(c1, c2));
        T_CHECK(json_equal(t1, direct));
        T_CHECK(json_array_size(json_object_get(c1, "columns")) <= 25);
        T_EQ(json_integer_value(json_object_get(c1, "first_step")), 0);
        /* the newest 30 loaded in full, the rest held; rank 1's steps without a value (its gap,
         * 2000..2469) are too recent to be final (the job is 25 s long): measured now, as the
         * newest are (from its kernels: none, 0 ms) */
        T_EQ(json_integer_value(json_object_get(c1, "last_steps")), RS_HEATMAP_AUTO_MIN_STEPS);
        T_EQ(json_integer_value(json_object_get(c1, "stored_rank_steps")), 2470 + 1900);
        T_EQ(json_integer_value(json_object_get(c1, "exact_rank_steps")), 2 * 30 + 100 + 470);
        T_EQ(json_integer_value(json_object_get(c1, "rank_steps_without_metrics")), 0);
        T_CHECK(columns_match(c1, 0, compute0_ns, false));
    }
    json_decref(c1);
    json_decref(c2);
    json_decref(t1);
    json_decref(direct);
    rs_store_read_end(r);

    /* the job goes on: 1,500 more steps of rank 0 and 1 (measured on both now); the cache adds
     * the steps that left the load, and counts none twice */
    struct rs_step_record *more0 = calloc(1500, sizeof *more0), *more1 = calloc(1500, sizeof *more1);
    for (uint64_t k = 0; k < 1500; k++) {
        uint64_t s = STEPS + k, t = 1000000000000ull + s * STEP_MS * 1000000ull;
        more0[k] = (struct rs_step_record){.step = s, .start_ns = t, .end_ns = t + STEP_MS * 1000000ull,
                                           .measured = true};
        more0[k].metrics = (struct rs_step_metrics){.compute_ns = compute0_ns(s),
                                                    .idle_ns = STEP_MS * 1000000ull - compute0_ns(s)};
        more1[k] = more0[k];
    }
    struct rs_rank_batch rb2[2] = {
        {.identity = T_IDENTITY("j", 0, 2, "G0"), T_RECORDS(steps, more0, 1500)},
        {.identity = T_IDENTITY("j", 1, 2, "G1"), T_RECORDS(steps, more1, 1500)}};
    t_store_put(st, rb2, 2);
    T_EQ(rs_store_read_begin(st, &r), 0);
    c1 = query_with(r, 0, UINT64_MAX, 0, 25, cache);
    direct = query(r, 0, UINT64_MAX, 0, 25);
    T_CHECK(c1 && direct);
    if (c1 && direct) {
        T_EQ(json_integer_value(json_object_get(c1, "last_step")), STEPS + 1500 - 1);
        T_CHECK(columns_match(c1, 0, compute0_ns, false));
        /* every step counted once (rank 1's without a value measured again: still recent) */
        T_EQ(json_integer_value(json_object_get(c1, "stored_rank_steps")) +
                 json_integer_value(json_object_get(c1, "exact_rank_steps")),
             4000 + 4000);
        T_EQ(json_integer_value(json_object_get(c1, "rank_steps_without_metrics")), 0);
        /* directly: the newest 1,000 loaded, older steps without a value left out */
        T_EQ(json_integer_value(json_object_get(direct, "stored_rank_steps")) +
                 json_integer_value(json_object_get(direct, "exact_rank_steps")),
             4000 + 4000 - 100 - 500);
    }
    json_decref(c1);
    json_decref(direct);
    rs_heatmap_cache_free(cache);
    rs_heatmap_cache_free(tiny);
    free(more0);
    free(more1);
    rs_store_read_end(r);
    t_store_remove(st, dir);
    free(s0);
    free(s1);
    free(sum);
}

/* Queries of two jobs through one cache that holds one of them at a time (least recently used
 * goes), from two threads at once: every answer equals the job's answer through a cache of its
 * own (the columns then lie on the cache's bins). */
struct racer {
    rs_store *st;
    const char *job;
    rs_heatmap_cache *cache;
    json_t *want;
    int mismatches;
};

static void *
race(void *arg)
{
    struct racer *x = arg;
    struct rs_heatmap_window all = {0, UINT64_MAX, 0};
    for (int i = 0; i < 20; i++) {
        rs_store_read *r;
        json_t *d = NULL;
        if (rs_store_read_begin(x->st, &r) != 0) {
            x->mismatches++;
            continue;
        }
        if (rs_query_heatmap(r, x->job, &all, RS_HEATMAP_COMPUTE, 7, x->cache, &d) != 0 ||
            !json_equal(json_object_get(d, "values"), json_object_get(x->want, "values")))
            x->mismatches++;
        json_decref(d);
        rs_store_read_end(r);
    }
    return NULL;
}

static void
cache_two_jobs(void)
{
    enum { N = 400 };
    struct rs_step_record s[2][N];
    char dir[] = "/tmp/rs-heatmap-lru-XXXXXX";
    const char *jobs[2] = {"a", "b"};
    rs_store *st = t_store_open(dir, NULL);

    for (int j = 0; j < 2; j++) {
        for (uint64_t k = 0; k < N; k++) {
            uint64_t t = 1000000000000ull + k * 10000000ull, c = (1000 + k * (j + 1)) * 1000ull;
            s[j][k] = (struct rs_step_record){.step = k, .start_ns = t, .end_ns = t + 10000000ull,
                                              .measured = true};
            s[j][k].metrics = (struct rs_step_metrics){.compute_ns = c, .idle_ns = 10000000ull - c};
        }
        struct rs_rank_batch rb[2] = {
            {.identity = T_IDENTITY(jobs[j], 0, 2, "G0"), T_RECORDS(steps, s[j], N)},
            {.identity = T_IDENTITY(jobs[j], 1, 2, "G1"), T_RECORDS(steps, s[j], N)}};
        t_store_put(st, rb, 2);
    }
    /* room for one 2-rank entry (~33 KB), not two */
    rs_heatmap_cache *cache = rs_heatmap_cache_new(48000), *own = rs_heatmap_cache_new(1u << 20);
    struct racer x[2];
    pthread_t t[2];
    for (int j = 0; j < 2; j++) {
        rs_store_read *r;
        struct rs_heatmap_window all = {0, UINT64_MAX, 0};
        x[j] = (struct racer){st, jobs[j], cache, NULL, 0};
        T_EQ(rs_store_read_begin(st, &r), 0);
        T_EQ(rs_query_heatmap(r, jobs[j], &all, RS_HEATMAP_COMPUTE, 7, own, &x[j].want), 0);
        rs_store_read_end(r);
    }
    T_CHECK(!json_equal(json_object_get(x[0].want, "values"), json_object_get(x[1].want, "values")));
    for (int j = 0; j < 2; j++)
        T_EQ(pthread_create(&t[j], NULL, race, &x[j]), 0);
    for (int j = 0; j < 2; j++) {
        pthread_join(t[j], NULL);
        T_EQ(x[j].mismatches, 0);
        json_decref(x[j].want);
    }
    rs_heatmap_cache_free(cache);
    rs_heatmap_cache_free(own);
    t_store_remove(st, dir);
}

/* A job that has just run, nothing of it summarized yet (steps recorded, no per-step values):
 * through the cache, the whole job is every step measured now — not only the newest loaded
 * (test 260 saw steps 270..299 of 0..299 when the evaluator had not yet stored its sums). */
static void
whole_job_nothing_stored(void)
{
    enum { N = 300 };
    struct rs_step_record *s0 = calloc(N, sizeof *s0);
    char dir[] = "/tmp/rs-heatmap-XXXXXX";
    rs_store_read *r;

    for (uint64_t s = 0; s < N; s++) {
        uint64_t t = 1000000000000ull + s * STEP_MS * 1000000ull;
        s0[s] = (struct rs_step_record){.step = s, .start_ns = t, .end_ns = t + STEP_MS * 1000000ull};
    }
    struct rs_rank_batch rb[2] = {{.identity = T_IDENTITY("j", 0, 2, "G0"), T_RECORDS(steps, s0, N)},
                                  {.identity = T_IDENTITY("j", 1, 2, "G1"), T_RECORDS(steps, s0, N)}};
    rs_store *st = t_store_open(dir, NULL);
    t_store_put(st, rb, 2);
    T_EQ(rs_store_read_begin(st, &r), 0);
    rs_heatmap_cache *cache = rs_heatmap_cache_new(64u << 20);
    json_t *d = query_with(r, 0, UINT64_MAX, 0, 50, cache);
    T_CHECK(d != NULL);
    if (d) {
        T_EQ(json_integer_value(json_object_get(d, "first_step")), 0);
        T_EQ(json_integer_value(json_object_get(d, "last_step")), N - 1);
        T_EQ(json_integer_value(json_object_get(d, "exact_rank_steps")), 2 * N);
        T_EQ(json_integer_value(json_object_get(d, "rank_steps_without_metrics")), 0);
        json_decref(d);
    }
    rs_store_read_end(r);
    rs_heatmap_cache_free(cache);
    t_store_remove(st, dir);
    free(s0);
}

int
main(void)
{
    T_RUN(binning);
    T_RUN(no_steps);
    T_RUN(metric_names);
    T_RUN(whole_job_from_store);
    T_RUN(whole_job_nothing_stored);
    T_RUN(cache_two_jobs);
    return T_DONE("query/heatmap");
}
