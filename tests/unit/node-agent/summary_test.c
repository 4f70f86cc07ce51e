/* Unit tests of the agent's per-rank summaries (node-agent/summary.h): window totals add up to
 * the launches absorbed, settle by record time, and steps go out measured exactly as the server
 * measures them from the same kernels (common/step_metrics.h); a rank without step markers sends
 * records. */
#include "common/step_metrics.h"
#include "node-agent/summary.h"
#include "tests/t.h"

#include <stdbool.h>
#include <string.h>

#define MS 1000000ull
#define S 1000000000ull

static const struct rs_summary_unseen none_seen = {0, 0, 0}, one_collective_seen = {0, 0, 1};

static void
add_kernel(struct rs_records *r, const char *name, uint64_t start, uint64_t dur)
{
    struct rs_kernel_record k = {start, start + dur, rs_strtab_intern(&r->names, name), 7, 0, 0};
    T_OK(rs_records_add_kernel(r, &k));
}

static void
add_step(struct rs_records *r, uint64_t step, uint64_t start, uint64_t end)
{
    struct rs_step_record s = {.step = step, .start_ns = start, .end_ns = end};
    T_OK(rs_records_add_step(r, &s));
}

static const struct rs_kernel_total *
find_total(const struct rs_records *r, const char *name, uint64_t window)
{
    for (uint32_t i = 0; i < r->kernel_totals.count; i++) {
        const struct rs_kernel_total *t = &r->kernel_totals.items[i];
        if (t->window_start_ns == window && strcmp(r->names.strings[t->name_id], name) == 0)
            return t;
    }
    return NULL;
}

static void
totals_per_window_and_name(void)
{
    struct rs_rank_summary s;
    struct rs_records in, out;
    const struct rs_kernel_total *t;

    rs_rank_summary_init(&s, 1 * S);
    rs_records_init(&in);
    rs_records_init(&out);
    add_step(&in, 1, 0, 50 * MS); /* marked: summarized from here on */
    add_kernel(&in, "gemm", 100 * MS, 2 * MS);
    add_kernel(&in, "gemm", 200 * MS, 5 * MS);
    add_kernel(&in, "relu", 300 * MS, 1 * MS);
    add_kernel(&in, "gemm", 1100 * MS, 3 * MS); /* the next window */
    struct rs_memcpy_record m = {400 * MS, 401 * MS, 4096, RS_COPY_HTOD, 7};
    T_OK(rs_records_add_memcpy(&in, &m));
    T_OK(rs_rank_summary_absorb(&s, &in, &none_seen));
    T_EQ(in.kernels.count + in.memcpys.count, 0); /* taken out */
    /* nothing has settled: the records reach only 1.1 s */
    T_OK(rs_rank_summary_emit(&s, &out, false));
    T_EQ(out.kernel_totals.count + out.copy_totals.count, 0);
    T_CHECK(rs_rank_summary_pending(&s));
    /* a record at 3.0 s settles the first window (it ends at 1 s, + 2 s) */
    rs_records_clear(&in, 1);
    add_kernel(&in, "relu", 3000 * MS, 1 * MS);
    T_OK(rs_rank_summary_absorb(&s, &in, &none_seen));
    T_OK(rs_rank_summary_emit(&s, &out, false));
    T_EQ(out.kernel_totals.count, 2);
    T_EQ(out.copy_totals.count, 1);
    T_CHECK((t = find_total(&out, "gemm", 0)) && t->count == 2 && t->total_ns == 7 * MS &&
            t->max_ns == 5 * MS && t->window_ns == 1 * S);
    T_CHECK((t = find_total(&out, "relu", 0)) && t->count == 1 && t->total_ns == 1 * MS);
    T_CHECK(out.copy_totals.items[0].bytes == 4096 && out.copy_totals.items[0].count == 1 &&
            out.copy_totals.items[0].kind == RS_COPY_HTOD);
    /* a late launch into the emitted window goes out as another total of it */
    rs_records_clear(&in, 1);
    add_kernel(&in, "gemm", 900 * MS, 1 * MS);
    T_OK(rs_rank_summary_absorb(&s, &in, &none_seen));
    rs_records_clear(&out, 1);
    T_OK(rs_rank_summary_emit(&s, &out, true));
    T_CHECK((t = find_total(&out, "gemm", 0)) && t->count == 1 && t->total_ns == 1 * MS);
    T_CHECK((t = find_total(&out, "gemm", 1 * S)) && t->count == 1);
    T_CHECK((t = find_total(&out, "relu", 3 * S)) && t->count == 1);
    T_EQ(out.kernel_totals.count, 3);
    T_CHECK(!rs_rank_summary_pending(&s));
    rs_records_fini(&in);
    rs_records_fini(&out);
    rs_rank_summary_fini(&s);
}

static bool
same_metrics(const struct rs_step_metrics *a, const struct rs_step_metrics *b)
{
    return a->compute_ns == b->compute_ns && a->comm_ns == b->comm_ns &&
           a->exposed_comm_ns == b->exposed_comm_ns && a->idle_ns == b->idle_ns &&
           a->host_gap_ns == b->host_gap_ns && a->kernels == b->kernels;
}

static void
steps_measured_like_the_server(void)
{
    struct rs_rank_summary s;
    struct rs_records in, out;
    struct rs_intervals all = {0};
    const char *const nccl_name = "ncclDevKernel_AllReduce";

    rs_rank_summary_init(&s, 1 * S);
    rs_records_init(&in);
    rs_records_init(&out);
    /* steps 1 and 2; step 1's marker ends at 20 ms but the step lasts until step 2 starts */
    add_step(&in, 1, 0, 20 * MS);
    add_step(&in, 2, 100 * MS, 120 * MS);
    add_kernel(&in, "gemm", 5 * MS, 30 * MS);
    add_kernel(&in, "gemm", 50 * MS, 10 * MS);
    add_kernel(&in, "gemm", 110 * MS, 40 * MS);
    T_OK(rs_intervals_add(&all, 5 * MS, 35 * MS, false));
    T_OK(rs_intervals_add(&all, 50 * MS, 60 * MS, false));
    T_OK(rs_intervals_add(&all, 110 * MS, 150 * MS, false));
    struct rs_collective_record c = {
        40 * MS, 70 * MS, 1024, 1, 1, RS_COLL_ALLREDUCE, rs_strtab_intern(&in.names, nccl_name),
        9,       false};
    T_OK(rs_records_add_collective(&in, &c));
    T_OK(rs_intervals_add(&all, 40 * MS, 70 * MS, true));
    T_OK(rs_rank_summary_absorb(&s, &in, &none_seen));
    T_EQ(in.collectives.count, 1); /* collectives stay records */
    /* absorbing again (the next frame) must not count the kept collective twice */
    T_OK(rs_rank_summary_absorb(&s, &in, &one_collective_seen));
    /* step 1 is known to end at 100 ms but the records reach only 150 ms: not settled */
    T_OK(rs_rank_summary_emit(&s, &out, false));
    T_EQ(out.steps.count, 0);
    rs_records_clear(&in, 1);
    add_kernel(&in, "relu", 2200 * MS, 1 * MS);
    T_OK(rs_intervals_add(&all, 2200 * MS, 2201 * MS, false));
    T_OK(rs_rank_summary_absorb(&s, &in, &none_seen));
    T_OK(rs_rank_summary_emit(&s, &out, false));
    T_EQ(out.steps.count, 1); /* step 2 waits for step 3's marker */
    struct rs_step_metrics want;
    rs_intervals_sort(&all);
    rs_intervals_measure(&all, 0, 100 * MS, &want);
    const struct rs_step_record *st = &out.steps.items[0];
    T_CHECK(st->measured && st->step == 1 && st->start_ns == 0 && st->end_ns == 100 * MS);
    T_CHECK(same_metrics(&st->metrics, &want));
    T_EQ(st->metrics.compute_ns, 40 * MS); /* 5-35 and 50-60 */
    T_EQ(st->metrics.comm_ns, 30 * MS);
    T_EQ(st->metrics.exposed_comm_ns, 20 * MS); /* 40-70 outside 50-60 */
    T_EQ(st->metrics.host_gap_ns, 5 * MS);
    T_CHECK(rs_step_metrics_valid(&st->metrics, 100 * MS));
    T_EQ(st->metrics.kernels, 3);
    /* the rank goes quiet: step 2 goes out with its own end */
    T_OK(rs_rank_summary_emit(&s, &out, true));
    T_EQ(out.steps.count, 2);
    rs_intervals_measure(&all, 100 * MS, 120 * MS, &want);
    T_CHECK(out.steps.count == 2 && out.steps.items[1].end_ns == 120 * MS &&
            same_metrics(&out.steps.items[1].metrics, &want));
    T_CHECK(!rs_rank_summary_pending(&s));
    rs_intervals_fini(&all);
    rs_records_fini(&in);
    rs_records_fini(&out);
    rs_rank_summary_fini(&s);
}

static void
many_windows_and_names(void)
{
    struct rs_rank_summary s;
    struct rs_records in, out;
    char name[32];
    uint64_t launches = 0, total = 0;

    rs_rank_summary_init(&s, 100 * MS);
    rs_records_init(&in);
    rs_records_init(&out);
    /* 50 windows x 200 names x 3 launches: the hash grows and is rebuilt as windows go out */
    add_step(&in, 1, 0, MS);
    for (uint64_t w = 0; w < 50; w++) {
        for (int n = 0; n < 200; n++)
            for (int k = 0; k < 3; k++) {
                snprintf(name, sizeof name, "kernel_%d", n);
                add_kernel(&in, name, w * 100 * MS + (uint64_t)k * MS, (uint64_t)n + 1);
            }
        T_OK(rs_rank_summary_absorb(&s, &in, &none_seen));
        rs_records_clear(&in, 1);
        T_OK(rs_rank_summary_emit(&s, &out, false));
    }
    T_OK(rs_rank_summary_emit(&s, &out, true));
    for (uint32_t i = 0; i < out.kernel_totals.count; i++) {
        launches += out.kernel_totals.items[i].count;
        total += out.kernel_totals.items[i].total_ns;
    }
    T_EQ(out.kernel_totals.count, 50 * 200);
    T_EQ(launches, 50 * 200 * 3);
    T_EQ(total, 50 * 3 * (200 * 201 / 2));
    rs_records_fini(&in);
    rs_records_fini(&out);
    rs_rank_summary_fini(&s);
}

/* A rank is summarized from its first step marker on: before, its records stay records; then its
 * steps are measured from what it absorbed. */
static void
records_until_the_first_marker(void)
{
    struct rs_rank_summary s;
    struct rs_records in, out;
    const struct rs_summary_unseen second_frame = {1, 0, 0};

    rs_rank_summary_init(&s, 1 * S);
    rs_records_init(&in);
    rs_records_init(&out);
    add_kernel(&in, "gemm", 100 * MS, 2 * MS);
    T_OK(rs_rank_summary_absorb(&s, &in, &none_seen));
    add_kernel(&in, "gemm", 200 * MS, 80 * MS); /* the next frame, before the flush */
    T_OK(rs_rank_summary_absorb(&s, &in, &second_frame));
    T_EQ(in.kernels.count, 2); /* records, sent as they are */
    T_CHECK(!rs_rank_summary_pending(&s));
    T_OK(rs_rank_summary_emit(&s, &out, true));
    T_EQ(out.kernel_totals.count + out.steps.count, 0);
    rs_records_clear(&in, 1); /* (flushed) */
    /* the first markers: step 1 started before the last record sent (280 ms), step 2 after; both
     * are measured from the kernels absorbed (step 1 without the one sent as a record) */
    add_step(&in, 1, 250 * MS, 260 * MS);
    add_step(&in, 2, 500 * MS, 510 * MS);
    add_kernel(&in, "gemm", 300 * MS, 5 * MS);
    add_kernel(&in, "gemm", 502 * MS, 5 * MS);
    T_OK(rs_rank_summary_absorb(&s, &in, &none_seen));
    T_EQ(in.kernels.count, 0); /* summarized now */
    T_OK(rs_rank_summary_emit(&s, &out, true));
    T_EQ(out.steps.count, 2);
    T_CHECK(out.steps.count == 2 && out.steps.items[0].measured &&
            out.steps.items[0].metrics.kernels == 1 && out.steps.items[1].measured &&
            out.steps.items[1].metrics.kernels == 1);
    T_EQ(out.kernel_totals.count, 1);
    T_CHECK(out.kernel_totals.count == 1 && out.kernel_totals.items[0].count == 2);
    rs_records_fini(&in);
    rs_records_fini(&out);
    rs_rank_summary_fini(&s);
}

int
main(void)
{
    T_RUN(totals_per_window_and_name);
    T_RUN(steps_measured_like_the_server);
    T_RUN(many_windows_and_names);
    T_RUN(records_until_the_first_marker);
    return T_DONE("node-agent/summary");
}
