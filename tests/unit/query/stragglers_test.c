/* Unit tests of the straggler rule on synthetic jobs built record by record: 3 ranks, 90 steps;
 * a rank whose kernels run 10% longer (gpu_slow), a rank that starts its kernels 100 us late every
 * step (host_side; its collectors also recorded launch waits: 100 us before the late rank's
 * first kernel, 5 us before the others'), and a job without a fault (no verdict). Each rank's
 * AllReduce ends when the slowest rank's compute is done, as in NCCL, so the late rank waits
 * least. */
#include "common/error.h"
#include "query/stragglers.h"
#include "tests/store_fixture.h"
#include "tests/t.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RANKS 3
#define STEPS 90
#define US 1000ull

static const char *const names[] = {"gemm", "allreduce"};

enum fault { NONE, SLOW_GPU, LATE_HOST };

/* The fault from step `onset` on (0: from the start). */
static void
put_job_from(rs_store *st, const char *job, enum fault job_fault, uint32_t bad_rank, uint32_t onset)
{
    static struct rs_kernel_record k[STEPS * 2];
    static struct rs_collective_record c[STEPS];
    static struct rs_step_record s[STEPS];
    static struct rs_memcpy_record lw[STEPS];
    rs_store_write *w;
    bool dup;

    for (uint32_t r = 0; r < RANKS; r++) {
        for (uint32_t i = 0; i < STEPS; i++) {
            enum fault fault = i >= onset ? job_fault : NONE;
            uint64_t t = (uint64_t)i * 1000 * US + 1000000 * US; /* steps of 1 ms */
            uint64_t gap = 10 * US, work = 250 * US, slowest = work + 10 * US;
            if (fault == SLOW_GPU && r == bad_rank) {
                work = work * 11 / 10;
            }
            if (fault == LATE_HOST && r == bad_rank)
                gap = 110 * US;
            if (fault == SLOW_GPU)
                slowest = 10 * US + 250 * US * 11 / 10 * 2 + 10 * US;
            else if (fault == LATE_HOST)
                slowest = 110 * US + 2 * 250 * US + 10 * US;
            else
                slowest = 10 * US + 2 * 250 * US + 10 * US;
            uint64_t k0 = t + gap, k1 = k0 + work, k2 = k1 + work;
            k[2 * i] = (struct rs_kernel_record){k0, k1, 0, 7, 0, 0};
            k[2 * i + 1] = (struct rs_kernel_record){k1, k2, 0, 7, 0, 0};
            c[i] = (struct rs_collective_record){
                k2, t + slowest + 50 * US, 8, 1, i, RS_COLL_ALLREDUCE, 1, 17, false};
            s[i] = (struct rs_step_record){.step = i, .start_ns = t, .end_ns = t + 900 * US};
            uint64_t wait = fault == LATE_HOST && r == bad_rank ? 100 * US : 5 * US;
            lw[i] = (struct rs_memcpy_record){k0 - wait, k0, 0, RS_LAUNCH_WAIT, 7};
        }
        struct rs_rank_batch rb = {.identity = {job, r, r, RANKS, "node", "GPU-x", 1},
                                   .strings = names,
                                   .n_strings = 2,
                                   .kernels = k,
                                   .n_kernels = STEPS * 2,
                                   .collectives = c,
                                   .n_collectives = STEPS,
                                   .steps = s,
                                   .n_steps = STEPS,
                                   .memcpys = lw,
                                   .n_memcpys = job_fault == LATE_HOST ? STEPS : 0};
        struct rs_agent_batch b = {
            1, 1, (uint64_t)job_fault * 100 + onset * 1000 + r + 1, {1, 1, "h", "v", {0, 0}}, &rb,
            1, 0};
        T_EQ(rs_store_write_begin(st, &w), 0);
        T_EQ(rs_store_write_batch(w, &b, &dup), 0);
        T_EQ(rs_store_write_commit(w), 0);
    }
}

static void
put_job(rs_store *st, const char *job, enum fault fault, uint32_t bad_rank)
{
    put_job_from(st, job, fault, bad_rank, 0);
}

static json_t *
verdicts(rs_store_read *r, const char *job)
{
    struct rs_straggler_options o;
    json_t *doc = NULL;

    rs_straggler_options_default(&o);
    T_EQ(rs_query_stragglers(r, job, &o, &doc), 0);
    return doc;
}

static void
rule(void)
{
    char dir[] = "/tmp/rs-straggle-XXXXXX";
    rs_store *st = NULL;
    rs_store_read *r;
    json_t *d, *v;

    st = t_store_open(dir, NULL);
    put_job(st, "gpu", SLOW_GPU, 2);
    put_job(st, "host", LATE_HOST, 1);
    put_job(st, "clean", NONE, 0);
    put_job_from(st, "onset", SLOW_GPU, 2, 37);
    T_EQ(rs_store_read_begin(st, &r), 0);

    d = verdicts(r, "gpu");
    T_EQ(json_array_size(json_object_get(d, "stragglers")), 1);
    v = json_array_get(json_object_get(d, "stragglers"), 0);
    T_EQ(json_integer_value(json_object_get(v, "rank")), 2);
    T_CHECK(v && strcmp(json_string_value(json_object_get(v, "cause")), "gpu_slow") == 0);
    T_CHECK(v &&
            !json_object_get(json_array_get(json_object_get(v, "evidence"), 0), "launch_wait_ms"));
    /* compute + host gap: (2 x 275 + 10) / (2 x 250 + 10) = 1.098 */
    T_CHECK(v && json_real_value(json_object_get(v, "slowdown")) > 1.09 &&
            json_real_value(json_object_get(v, "slowdown")) < 1.11);
    T_CHECK(v && json_real_value(json_object_get(v, "last_frac")) == 1.0);
    T_EQ(json_integer_value(json_object_get(v, "windows")), 3); /* all 90 steps = 3 windows */
    T_EQ(json_integer_value(json_object_get(v, "since_step")), 0);
    json_decref(d);

    d = verdicts(r, "host");
    v = json_array_get(json_object_get(d, "stragglers"), 0);
    T_EQ(json_array_size(json_object_get(d, "stragglers")), 1);
    T_EQ(json_integer_value(json_object_get(v, "rank")), 1);
    T_CHECK(v && strcmp(json_string_value(json_object_get(v, "cause")), "host_side") == 0);
    json_t *e = json_array_get(json_object_get(v, "evidence"), 0);
    T_CHECK(e && json_real_value(json_object_get(e, "host_gap_ms")) > 0.109 &&
            json_real_value(json_object_get(e, "host_gap_ms")) < 0.111);
    T_CHECK(e && json_real_value(json_object_get(e, "launch_wait_ms")) > 0.099 &&
            json_real_value(json_object_get(e, "launch_wait_ms")) < 0.101);
    T_CHECK(e && json_real_value(json_object_get(e, "peers_launch_wait_ms")) > 0.0049 &&
            json_real_value(json_object_get(e, "peers_launch_wait_ms")) < 0.0051);
    json_decref(d);

    d = verdicts(r, "clean");
    T_EQ(json_array_size(json_object_get(d, "stragglers")), 0);
    T_CHECK(strncmp(json_string_value(json_object_get(d, "summary")), "no straggler", 12) == 0);
    json_decref(d);

    /* slow from step 37: the rule holds from window 30..59 (23 slow steps of 30), the onset is
     * found per step, over windows 0..29 and 30..59; the windows are named */
    d = verdicts(r, "onset");
    v = json_array_get(json_object_get(d, "stragglers"), 0);
    T_EQ(json_array_size(json_object_get(d, "stragglers")), 1);
    T_EQ(json_integer_value(json_object_get(v, "since_step")), 30);
    json_t *o = json_object_get(v, "onset");
    T_EQ(json_integer_value(json_object_get(o, "step")), 37);
    T_EQ(json_integer_value(json_object_get(o, "searched_from_step")), 0);
    T_EQ(json_integer_value(json_object_get(o, "searched_to_step")), 59);
    T_EQ(json_integer_value(json_object_get(o, "steps_disagreeing")), 0);
    T_CHECK(json_is_false(json_object_get(o, "before_search")));
    T_EQ(json_integer_value(json_object_get(json_object_get(d, "window"), "first_step")), 60);
    T_EQ(json_integer_value(json_object_get(json_object_get(d, "window"), "last_step")), 89);
    T_EQ(json_integer_value(json_object_get(v, "instances")), 30);
    T_EQ(json_integer_value(json_object_get(json_object_get(v, "impact_window"), "first_step")),
         30);
    json_decref(d);
    /* a fault from the first step: the onset may be older than what was searched */
    d = verdicts(r, "gpu");
    o = json_object_get(json_array_get(json_object_get(d, "stragglers"), 0), "onset");
    T_EQ(json_integer_value(json_object_get(o, "step")), 0);
    T_CHECK(json_is_true(json_object_get(o, "before_search")));
    json_decref(d);

    T_EQ(rs_query_stragglers(r, "nope", NULL, &d), RS_E_NOT_FOUND);
    rs_store_read_end(r);
    t_store_remove(st, dir);
}

int
main(void)
{
    T_RUN(rule);
    return T_DONE("query/stragglers");
}
