/* Unit tests of top, compare and stalls on a hand-built job with known answers
 * (profile_fixture.h). */
#include "common/error.h"
#include "query/compare.h"
#include "query/stalls.h"
#include "query/top.h"
#include "tests/t.h"
#include "tests/unit/query/profile_fixture.h"
#include "tests/t_batch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEAR(x, want) (fabs((x) - (want)) < 1e-9)

static double
num(json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

static const char *
str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static void
top(rs_store_read *r)
{
    struct rs_profile_scope all = {"job", RS_PROFILE_ALL_RANKS, false, 0, 0}, one = all;
    json_t *d = NULL, *k;

    T_EQ(rs_query_top(r, &all, 10, &d), 0);
    /* mean rank per step: (2x100 + 50 + 30 + 2x150 + 50 + 20 + 30) / 2 = 340 us */
    T_CHECK(NEAR(num(d, "total_ms"), 0.34));
    T_EQ(json_integer_value(json_object_get(json_object_get(d, "scope"), "rank_steps")), 20);
    k = json_array_get(json_object_get(d, "kernels"), 0);
    T_CHECK(strcmp(str(k, "name"), "a") == 0 && NEAR(num(k, "ms"), 0.25) &&
            NEAR(num(k, "calls"), 2.0) && NEAR(num(k, "mean_us"), 125.0));
    T_EQ(json_integer_value(json_object_get(k, "stall_samples")), 110);
    k = json_array_get(json_object_get(d, "kernels"), 2);
    T_CHECK(strcmp(str(k, "name"), "AllReduce") == 0 && strcmp(str(k, "kind"), "nccl") == 0);
    /* the host's waits, apart from the GPU time: rank 1's 200 us per step over the mean rank */
    json_t *sync = json_object_get(d, "host_sync");
    k = json_array_get(sync, 0);
    T_CHECK(json_array_size(sync) == 1 && strcmp(str(k, "name"), "Stream Sync") == 0 &&
            NEAR(num(k, "ms"), 0.1) && NEAR(num(k, "calls"), 0.5));
    json_decref(d);

    one.rank = 1;
    T_EQ(rs_query_top(r, &one, 1, &d), 0);
    k = json_array_get(json_object_get(d, "kernels"), 0);
    T_CHECK(strcmp(str(k, "name"), "a") == 0 && NEAR(num(k, "ms"), 0.3));
    json_t *other = json_object_get(d, "other");
    T_EQ(json_integer_value(json_object_get(other, "items")), 3); /* b, c, AllReduce */
    T_CHECK(NEAR(num(other, "ms"), 0.1));
    json_decref(d);

    one.rank = 7;
    T_EQ(rs_query_top(r, &one, 10, &d), RS_E_NOT_FOUND);
    all.job = "nope";
    T_EQ(rs_query_top(r, &all, 10, &d), RS_E_NOT_FOUND);
}

static void
compare(rs_store_read *r)
{
    struct rs_profile_scope a = {"job", 0, false, 0, 0}, b = {"job", 1, false, 0, 0};
    json_t *d = NULL, *it;
    size_t i;
    char side = 0;
    double sum = 0;

    T_EQ(rs_query_compare(r, &a, &b, 2, &side, &d), 0);
    json_t *total = json_object_get(d, "total");
    T_CHECK(NEAR(num(total, "a_ms"), 0.28) && NEAR(num(total, "b_ms"), 0.40) &&
            NEAR(num(total, "change_ms"), 0.12));
    it = json_array_get(json_object_get(d, "items"), 0);
    T_CHECK(strcmp(str(it, "name"), "a") == 0 && NEAR(num(it, "change_ms"), 0.1) &&
            NEAR(num(it, "change_pct"), 50.0));
    it = json_array_get(json_object_get(d, "items"), 1);
    T_CHECK(strcmp(str(it, "name"), "c") == 0 && NEAR(num(it, "b_ms"), 0.02) &&
            json_is_null(json_object_get(it, "change_pct"))); /* new on side B */
    json_array_foreach(json_object_get(d, "items"), i, it) sum += num(it, "change_ms");
    sum += num(json_object_get(d, "other"), "change_ms");
    T_CHECK(NEAR(sum, 0.12)); /* the changes add up to the change of the total */
    /* stall mix: long_scoreboard 10/40 = 25% on A, 40/70 = 57.1% on B */
    it = json_array_get(json_object_get(d, "stall_mix"), 0);
    T_CHECK(strcmp(str(it, "reason"), "long_scoreboard") == 0 &&
            NEAR(num(it, "change_pts"), 100.0 * 40 / 70 - 25.0));
    /* host synchronizations: none on A, 200 us per step on B */
    it = json_array_get(json_object_get(d, "host_sync"), 0);
    T_CHECK(json_array_size(json_object_get(d, "host_sync")) == 1 &&
            strcmp(str(it, "name"), "Stream Sync") == 0 && NEAR(num(it, "a_ms"), 0.0) &&
            NEAR(num(it, "b_ms"), 0.2) && NEAR(num(it, "change_ms"), 0.2) &&
            NEAR(num(it, "b_calls"), 1.0));
    json_decref(d);

    /* two windows of rank 0: the first 5 steps against the last 5: no change */
    a.until_ns = b.since_ns = T0 + 5000 * US;
    b.rank = 0;
    T_EQ(rs_query_compare(r, &a, &b, 10, &side, &d), 0);
    T_EQ(json_integer_value(json_object_get(json_object_get(d, "a"), "rank_steps")), 5);
    T_EQ(json_integer_value(json_object_get(json_object_get(d, "b"), "rank_steps")), 5);
    T_CHECK(NEAR(num(json_object_get(d, "total"), "change_ms"), 0.0));
    T_CHECK(strncmp(str(d, "summary"), "no change", 9) == 0);
    json_decref(d);

    b.job = "other";
    T_EQ(rs_query_compare(r, &a, &b, 10, &side, &d), RS_E_NOT_FOUND);
    T_EQ(side, 'b');
}

static void
stalls(rs_store_read *r)
{
    struct rs_profile_scope all = {"job", RS_PROFILE_ALL_RANKS, false, 0, 0}, one = all;
    json_t *d = NULL, *x;

    T_EQ(rs_query_stalls(r, &all, 10, &d), 0);
    T_EQ(json_integer_value(json_object_get(d, "samples")), 110);
    x = json_array_get(json_object_get(d, "reasons"), 0);
    T_CHECK(strcmp(str(x, "reason"), "selected") == 0 && NEAR(num(x, "pct"), 100.0 * 60 / 110));
    x = json_array_get(json_object_get(d, "kernels"), 0);
    T_CHECK(strcmp(str(x, "name"), "a") == 0);
    /* down to its PCs: 0xc0 (30 + 30, all "selected") before 0x80 (10 + 40, long_scoreboard) */
    json_t *pcs = json_object_get(x, "pcs"), *pc0 = json_array_get(pcs, 0), *pc1 = json_array_get(pcs, 1);
    T_EQ(json_array_size(pcs), 2);
    T_CHECK(strcmp(str(pc0, "pc"), "0xc0") == 0 && json_integer_value(json_object_get(pc0, "samples")) == 60);
    T_CHECK(strcmp(str(pc1, "pc"), "0x80") == 0 && json_integer_value(json_object_get(pc1, "samples")) == 50);
    x = json_array_get(json_object_get(pc1, "reasons"), 0);
    T_CHECK(strcmp(str(x, "reason"), "long_scoreboard") == 0 &&
            json_integer_value(json_object_get(x, "samples")) == 50);
    T_EQ(json_array_size(json_object_get(pc1, "reasons")), 1);
    T_CHECK(json_is_null(json_object_get(d, "vs_peers"))); /* 10 steps: no straggler verdict */
    json_decref(d);

    one.rank = 1;
    T_EQ(rs_query_stalls(r, &one, 10, &d), 0);
    T_EQ(json_integer_value(json_object_get(d, "samples")), 70);
    pc0 = json_array_get(json_object_get(json_array_get(json_object_get(d, "kernels"), 0), "pcs"), 0);
    T_CHECK(strcmp(str(pc0, "pc"), "0x80") == 0 && json_integer_value(json_object_get(pc0, "samples")) == 40);
    json_t *vs = json_object_get(d, "vs_peers");
    T_CHECK(strcmp(str(vs, "why"), "requested") == 0);
    x = json_array_get(json_object_get(json_object_get(vs, "comparison"), "stall_mix"), 0);
    T_CHECK(strcmp(str(x, "reason"), "long_scoreboard") == 0 && num(x, "change_pts") > 32);
    json_decref(d);
}

/* GPU busy time and launch waits per second, against values worked out by hand: one rank without
 * steps; from T1, 10 kernels of 100 ms back to back on stream 7 and, inside each, one of 50 ms on
 * stream 8 (stored after them: out of start order), so 1,500 ms of kernels in 1,000 ms busy; and a
 * start-up before them — a 1 ms copy at T0 - 1 ms, then the GPU idle for 3 s until the host queued
 * the first kernel (one launch wait [T0, T1), and another process sending as the same rank waited
 * [T0 + 1 s, T1)). Every figure is per second of the span of all records, 4.001 s: launch waits
 * 3,000 / 4.001 ms/s (their union), not 3,000 or 5,000 per second of the kernels' span; busy
 * 1,000 / 4.001; and the launch waits are apart from the host's syncs. */
static void
busy_and_launch_waits(void)
{
    char dir[] = "/tmp/rs-busy-XXXXXX";
    const uint64_t MS = 1000 * US, T1 = T0 + 3000 * MS;
    struct rs_kernel_record k[20];
    /* the second launch wait overlaps the first: another process sending as the same rank */
    struct rs_memcpy_record m[4] = {{T0 - MS, T0, 4096, RS_COPY_HTOD, 7},
                                    {T0, T1, 0, RS_LAUNCH_WAIT, 7},
                                    {T0 + 1000 * MS, T1, 0, RS_LAUNCH_WAIT, 9},
                                    {T1 + 990 * MS, T1 + 995 * MS, 0, RS_SYNC_STREAM, 7}};
    rs_store *st = t_store_open(dir, NULL);
    rs_store_read *r;
    json_t *d = NULL;

    for (uint32_t i = 0; i < 10; i++) {
        k[i] = (struct rs_kernel_record){T1 + i * 100 * MS, T1 + (i + 1) * 100 * MS, 0, 7, 0, 0};
        k[10 + i] = (struct rs_kernel_record){
            T1 + i * 100 * MS + 25 * MS, T1 + i * 100 * MS + 75 * MS, 1, 8, 0, 0};
    }
    struct rs_rank_batch rb = {.identity = T_IDENTITY_OF("lw", 0, 0, 1, "node", "GPU-x", 1),
                               .clock = {T0, T0},
                               T_RECORDS(strings, names, 2),
                               T_RECORDS(kernels, k, 20),
                               T_RECORDS(memcpys, m, 4)};
    t_store_put(st, &rb, 1);
    T_EQ(rs_store_read_begin(st, &r), 0);
    struct rs_profile_scope all = {"lw", RS_PROFILE_ALL_RANKS, false, 0, 0};
    T_EQ(rs_query_top(r, &all, 10, &d), 0);
    json_t *scope = json_object_get(d, "scope"), *lw = json_object_get(d, "launch_wait");
    double span_s = 4.001;
    T_CHECK(strcmp(str(scope, "unit"), "per_second") == 0);
    T_EQ(json_integer_value(json_object_get(scope, "since_ns")), (json_int_t)(T0 - MS));
    T_EQ(json_integer_value(json_object_get(scope, "until_ns")), (json_int_t)(T1 + 1000 * MS));
    T_CHECK(fabs(num(d, "total_ms") - 1500 / span_s) < 1e-6);
    T_CHECK(fabs(num(d, "gpu_busy_ms") - 1000 / span_s) < 1e-6);
    T_CHECK(json_is_object(lw) && fabs(num(lw, "ms") - 3000 / span_s) < 1e-6 &&
            fabs(num(lw, "calls") - 2 / span_s) < 1e-9 && num(lw, "ms") <= 1000);
    json_t *sync = json_object_get(d, "host_sync");
    T_CHECK(json_array_size(sync) == 1 &&
            strcmp(str(json_array_get(sync, 0), "name"), "Stream Sync") == 0);
    json_decref(d);
    /* compare carries both, each in its own field */
    struct rs_profile_scope later = all;
    later.since_ns = T1;
    char side;
    T_EQ(rs_query_compare(r, &all, &later, 10, &side, &d), 0);
    lw = json_object_get(d, "launch_wait");
    T_CHECK(json_is_object(lw) && fabs(num(lw, "a_ms") - 3000 / span_s) < 1e-6 &&
            num(lw, "b_ms") == 0);
    T_CHECK(json_array_size(json_object_get(d, "host_sync")) == 1);
    json_t *busy = json_object_get(d, "gpu_busy");
    T_CHECK(fabs(num(busy, "a_ms") - 1000 / span_s) < 1e-6 &&
            fabs(num(busy, "b_ms") - 1000) < 1e-6);
    json_decref(d);
    rs_store_read_end(r);
    t_store_remove(st, dir);
}

/* A rank that traces kernels in windows (RS_COLLECTOR_KERNELS_SAMPLED): 40 steps of 100 ms,
 * kernels (20 ms each) only in steps 10 - 14 and 30 - 34, NCCL records in every step (the plugin
 * is always on). Per-step figures are over the 10 traced steps, not diluted over 40; the answer
 * says it is sampled and how many steps were not traced. A rank that always traces: all steps. */
static void
sampled_steps(void)
{
    char dir[] = "/tmp/rs-sampled-XXXXXX";
    const uint64_t MS = 1000 * US;
    struct rs_kernel_record k[10];
    struct rs_collective_record c[40];
    struct rs_step_record stp[40];
    rs_store *st = t_store_open(dir, NULL);
    rs_store_read *r;
    json_t *d = NULL;
    uint32_t n = 0;

    for (uint32_t i = 0; i < 40; i++) {
        uint64_t t = T0 + i * 100 * MS;
        stp[i] = (struct rs_step_record){.step = i, .start_ns = t, .end_ns = t + 100 * MS};
        c[i] = (struct rs_collective_record){t + 90 * MS, t + 95 * MS, 8, 5, i, RS_COLL_ALLREDUCE,
                                             3, 0, true};
        if ((i >= 10 && i < 15) || (i >= 30 && i < 35))
            k[n++] = (struct rs_kernel_record){t + 10 * MS, t + 30 * MS, 0, 7, 0, 0};
    }
    for (uint32_t flags = 0; flags <= RS_COLLECTOR_KERNELS_SAMPLED; flags += RS_COLLECTOR_KERNELS_SAMPLED) {
        const char *job = flags ? "sampled" : "always";
        struct rs_rank_batch rb = {.identity = T_IDENTITY_OF(job, 0, 0, 1, "node", "GPU-x", 1),
                                   .clock = {T0, T0},
                                   .collector_flags = flags,
                                   T_RECORDS(strings, names, 4),
                                   T_RECORDS(kernels, k, n),
                                   T_RECORDS(collectives, c, 40),
                                   T_RECORDS(steps, stp, 40)};
        t_store_put(st, &rb, 1);
    }
    T_EQ(rs_store_read_begin(st, &r), 0);
    struct rs_profile_scope sampled = {"sampled", RS_PROFILE_ALL_RANKS, false, 0, 0};
    T_EQ(rs_query_top(r, &sampled, 10, &d), 0);
    json_t *scope = json_object_get(d, "scope");
    T_CHECK(json_is_true(json_object_get(d, "sampled")));
    T_EQ(json_integer_value(json_object_get(scope, "rank_steps")), 10);
    T_EQ(json_integer_value(json_object_get(scope, "untraced_rank_steps")), 30);
    T_EQ(json_integer_value(json_object_get(scope, "sampled_ranks")), 1);
    json_t *a = json_array_get(json_object_get(d, "kernels"), 0);
    T_CHECK(a && strcmp(str(a, "name"), "a") == 0 && fabs(num(a, "ms") - 20.0) < 1e-9);
    json_decref(d);
    struct rs_profile_scope always = {"always", RS_PROFILE_ALL_RANKS, false, 0, 0};
    T_EQ(rs_query_top(r, &always, 10, &d), 0);
    scope = json_object_get(d, "scope");
    T_CHECK(json_is_false(json_object_get(d, "sampled")));
    T_EQ(json_integer_value(json_object_get(scope, "rank_steps")), 40);
    T_CHECK(json_object_get(scope, "untraced_rank_steps") == NULL);
    a = json_array_get(json_object_get(d, "kernels"), 0);
    T_CHECK(a && fabs(num(a, "ms") - 5.0) < 1e-9); /* 10 x 20 ms over 40 steps */
    json_decref(d);
    rs_store_read_end(r);
    t_store_remove(st, dir);
}

int
main(void)
{
    char dir[] = "/tmp/rs-profile-XXXXXX";
    rs_store *st;
    rs_store_read *r = fixture_open(dir, &st);

    T_RUN_ARG(top, r);
    T_RUN_ARG(compare, r);
    T_RUN_ARG(stalls, r);
    T_RUN(busy_and_launch_waits);
    T_RUN(sampled_steps);
    /* the same totals when the kernels are rolled up into windows (compare's 5 ms windows are
     * finer than the 60 s rollups: not asked again) */
    rs_store_read_end(r);
    T_EQ(fixture_roll_up(st, "job", 2), 30 + 40 + 10); /* + rank 1's Stream Syncs, as copies */
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_RUN_ARG(top, r);
    fixture_close(dir, st, r);
    return T_DONE("query/profile");
}
