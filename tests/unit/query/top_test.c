/* Whole-job `top` from the job's running totals (query/top_totals.c, storage/job_top.c) against
 * the same answer built from every record (a scope with an explicit end, which the totals do not
 * serve): equal JSON on jobs built like training runs — ranks of steps with kernels of several
 * names, an AllReduce per step, copies, host syncs, launch waits between steps, PC samples, some
 * batches summarized into kernel windows as agents send them — also after partial and complete
 * rollups, replaced records, an upgrade from format 7 and a chunked delete. Each case also checks
 * which path answered, so that a comparison of the scan with itself cannot pass unnoticed. */
#include "query/profile_int.h"
#include "query/top.h"
#include "storage/keys.h"
#include "tests/store_fixture.h"

#include "common/clock.h"
#include "common/error.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MS 1000000ull
#define S (1000 * MS)

#define N_KNAMES 5 /* kernel names: the first 5 strings of put_batch's table (then NCCL's) */

static uint64_t rng = 88172645463325252ull;
static uint64_t
next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static uint64_t
between(uint64_t lo, uint64_t hi)
{
    return lo + next() % (hi - lo + 1);
}

struct gen {
    uint64_t t;    /* where the rank's next step starts */
    uint64_t step; /* its next step number */
};

/* One batch of `steps` steps of `rank` from g: kernels of random names and lengths back to back
 * on one stream (a second stream overlaps some), an AllReduce at each step's end, a launch wait
 * before each step, a stream sync and a copy per step, PC samples; `summarized`: the kernels as
 * the 1 s windows of an agent that summarizes instead. `sampled`: the rank traces kernels in
 * windows. */
static void
put_batch(rs_store *st, const char *job, uint32_t rank, uint32_t world, struct gen *g, int steps,
          bool summarized, bool lw_overlap)
{
    struct rs_kernel_record k[400];
    struct rs_kernel_total kt[400];
    struct rs_collective_record c[40];
    struct rs_memcpy_record m[120];
    struct rs_step_record s[40];
    struct rs_stall_record x[4];
    uint32_t nk = 0, nkt = 0, nc = 0, nm = 0, ns = 0, nx = 0;

    for (int i = 0; i < steps; i++) {
        uint64_t start = g->t, t = start + between(50, 400) * 1000; /* after the launch wait */
        m[nm++] = (struct rs_memcpy_record){start + (lw_overlap && i == 1 ? 0 : 10000), t, 0,
                                            RS_LAUNCH_WAIT, 7};
        if (lw_overlap && i == 1) /* a second process of the rank: its wait overlaps */
            m[nm++] = (struct rs_memcpy_record){start, t - 5000, 0, RS_LAUNCH_WAIT, 9};
        int kernels = (int)between(3, 8);
        for (int j = 0; j < kernels; j++) {
            uint32_t name = (uint32_t)(next() % N_KNAMES);
            uint64_t d = between(20, 3000) * 1000;
            k[nk++] = (struct rs_kernel_record){t, t + d, name, j % 3 == 2 ? 8 : 7, 0, 0};
            if (j % 3 != 2)
                t += d + between(1, 50) * 1000;
        }
        m[nm++] = (struct rs_memcpy_record){t, t + between(10, 200) * 1000, 1 << 20, RS_COPY_DTOH,
                                            7};
        uint64_t cs = t + between(1, 100) * 1000, ce = cs + between(100, 5000) * 1000;
        c[nc++] = (struct rs_collective_record){cs, ce, 1 << 24, 0xc0ffee, g->step,
                                                RS_COLL_ALLREDUCE, 5, 11, true};
        m[nm++] = (struct rs_memcpy_record){cs, ce + 1000, 0, RS_SYNC_STREAM, 7};
        s[ns++] = (struct rs_step_record){.step = g->step++, .start_ns = start, .end_ns = ce};
        g->t = ce + between(1, 10) * 1000;
    }
    x[nx++] = (struct rs_stall_record){0x80, between(1, 100), (uint32_t)(next() % N_KNAMES), 6, 1};
    x[nx++] = (struct rs_stall_record){0xc0, between(1, 100), 0, 7, 1};
    if (summarized) { /* one total per (1 s window, name), as an agent sends them */
        for (uint32_t i = 0; i < nk; i++) {
            uint64_t w = k[i].start_ns - k[i].start_ns % S;
            uint32_t j = 0;
            while (j < nkt && !(kt[j].window_start_ns == w && kt[j].name_id == k[i].name_id))
                j++;
            if (j == nkt)
                kt[nkt++] = (struct rs_kernel_total){w, S, k[i].name_id, 0, 0, 0};
            uint64_t d = k[i].end_ns - k[i].start_ns;
            kt[j].count++;
            kt[j].total_ns += d;
            kt[j].max_ns = d > kt[j].max_ns ? d : kt[j].max_ns;
        }
        nk = 0;
    }
    static const char *const strings[] = {
        "gemm_fp16", "layernorm_fwd", "softmax", "attn_fwd", "adam_step", "ncclDevKernel_AllReduce",
        "smsp__pcsamp_warps_issue_stalled_long_scoreboard",
        "smsp__pcsamp_warps_issue_stalled_selected"};
    _Static_assert(sizeof strings / sizeof strings[0] == 8, "names of the batch");
    struct rs_rank_batch rb = {.identity = T_IDENTITY_OF(job, rank, rank % 8, world, "node", "GPU-t",
                                                         100 + rank),
                               .clock = {g->t, g->t},
                               T_RECORDS(strings, strings, 8),
                               T_RECORDS(kernels, k, nk),
                               T_RECORDS(kernel_totals, kt, nkt),
                               T_RECORDS(collectives, c, nc),
                               T_RECORDS(memcpys, m, nm),
                               T_RECORDS(steps, s, ns),
                               T_RECORDS(stalls, x, nx)};
    t_store_put(st, &rb, 1);
}

/* A job of `ranks` ranks, `batches` batches each (every third summarized when `windows`), from
 * time t0 and step `step` on. */
static void
put_job(rs_store *st, const char *job, uint32_t ranks, int batches, bool windows, uint64_t t0,
        uint64_t step)
{
    struct gen g[16];

    for (uint32_t r = 0; r < ranks; r++)
        g[r] = (struct gen){t0 + between(0, 1000) * 1000, step};
    for (int b = 0; b < batches; b++)
        for (uint32_t r = 0; r < ranks; r++)
            put_batch(st, job, r, ranks, &g[r], (int)between(5, 30), windows && b % 3 == 1,
                      false);
}

/* top of the whole job both ways; `totals`: whether the totals must have answered. */
static void
same_answer(rs_store *st, const char *job, bool totals)
{
    rs_store_read *r;
    struct rs_profile_scope whole = {job, RS_PROFILE_ALL_RANKS, false, 0, 0};
    struct rs_profile_scope scanned = {job, RS_PROFILE_ALL_RANKS, false, 0, UINT64_MAX};
    struct rs_profile p;
    json_t *a = NULL, *b = NULL;

    T_OK(rs_store_read_begin(st, &r));
    int rc = rs__profile_from_totals(r, &whole, &p);
    T_EQ(rc, totals ? 0 : 1);
    if (rc == 0)
        rs_profile_fini(&p);
    for (size_t limit = 2; limit <= 20; limit += 18) {
        T_EQ(rs_query_top(r, &whole, limit, &a), 0);
        T_EQ(rs_query_top(r, &scanned, limit, &b), 0);
        T_CHECK(a && b && json_equal(a, b));
        if (a && b && !json_equal(a, b)) {
            char *x = json_dumps(a, JSON_SORT_KEYS), *y = json_dumps(b, JSON_SORT_KEYS);
            fprintf(stderr, "  totals: %s\n  scan:   %s\n", x, y);
            free(x);
            free(y);
        }
        json_decref(a);
        json_decref(b);
        a = b = NULL;
    }
    rs_store_read_end(r);
}

/* The store passes --check's walk (job_top entries of existing jobs), then goes. */
static void
consistent_then_remove(rs_store *st, const char *dir)
{
    struct rs_store_check_report rep;
    T_EQ(rs_store_check(st, &rep), 0);
    t_store_remove(st, dir);
}

/* Totals answer a job with kernel windows as its records do, before and after rollups that
 * split chunks at a horizon, coarsen agent windows and then roll up everything. */
static void
equal_through_rollups(void)
{
    char dir[] = "/tmp/rs-top-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    uint64_t t0 = rs_clock_realtime_ns() - 3600 * S;

    put_job(st, "train", 8, 12, true, t0, 0);
    put_job(st, "other", 2, 3, true, t0, 0);
    same_answer(st, "train", true);
    /* the newest 2 s stay raw: a horizon inside the job */
    t_store_rollup(st, rs_clock_realtime_ns(), 2 * S, 60 * S, 37);
    same_answer(st, "train", true);
    put_job(st, "train", 8, 2, true, t0 + 1000 * S, 100000); /* more after the rollup */
    same_answer(st, "train", true);
    t_store_rollup(st, rs_clock_realtime_ns() + 48 * 3600 * S, 2 * S, 60 * S, 1000);
    same_answer(st, "train", true);
    same_answer(st, "other", true);
    consistent_then_remove(st, dir);
}

/* A rolled-up kernel that ends past its minute: its window grows to hold it, so the job's span
 * (and the per-second figures of a job without steps) stays what the records said. */
static void
rollup_keeps_the_span(void)
{
    char dir[] = "/tmp/rs-top-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    uint64_t m0 = (rs_clock_realtime_ns() - 3600 * S) / (60 * S) * (60 * S);
    static const char *const strings[] = {"gemm_fp16"};
    struct rs_kernel_total kt[] = {{m0, S, 0, 3, 3 * MS, MS}};
    struct rs_kernel_record k[] = {{m0 + 2 * S, m0 + 2 * S + 40 * MS, 0, 7, 0, 0},
                                   {m0 + 59 * S + 900 * MS, m0 + 60 * S + 200 * MS, 0, 7, 0, 0}};
    struct rs_rank_batch rb = {.identity = T_IDENTITY_OF("span", 0, 0, 1, "node", "GPU-t", 1),
                               .clock = {m0 + 61 * S, m0 + 61 * S},
                               T_RECORDS(strings, strings, 1),
                               T_RECORDS(kernels, k, 2),
                               T_RECORDS(kernel_totals, kt, 1)};
    t_store_put(st, &rb, 1);
    same_answer(st, "span", true);
    t_store_rollup(st, rs_clock_realtime_ns() + 48 * 3600 * S, S, 60 * S, 1000);
    same_answer(st, "span", true);
    t_store_remove(st, dir);
}

/* Where totals cannot give the records' answer, the records answer: GPU busy time (no kernel
 * window), overlapping launch waits, a replaced NCCL record; and a job half deleted. */
static void
scans_where_totals_cannot(void)
{
    char dir[] = "/tmp/rs-top-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    uint64_t t0 = rs_clock_realtime_ns() - 3600 * S;
    struct gen g = {t0, 0};

    put_job(st, "raw", 4, 3, false, t0, 0); /* busy time is known: a union of intervals */
    same_answer(st, "raw", false);
    put_batch(st, "lw", 0, 1, &g, 5, true, false);
    same_answer(st, "lw", true);
    put_batch(st, "lw", 0, 1, &g, 5, true, true);
    same_answer(st, "lw", false);
    struct gen g2 = {t0, 0};
    put_batch(st, "again", 0, 1, &g2, 5, true, false);
    same_answer(st, "again", true);
    g2 = (struct gen){t0, 0}; /* the same steps and NCCL sequence numbers again */
    put_batch(st, "again", 0, 1, &g2, 5, true, false);
    same_answer(st, "again", false);
    /* a chunked delete: the totals go first, the rest of the job answers by scan */
    put_job(st, "gone", 4, 4, true, t0, 0);
    rs_store_write *w;
    uint64_t deleted = 0;
    bool done = false;
    T_OK(rs_store_write_begin(st, &w));
    T_EQ(rs_store_delete_job(w, "gone", 3, &deleted, &done), 0);
    T_EQ(rs_store_write_commit(w), 0);
    T_CHECK(!done);
    same_answer(st, "gone", false);
    t_store_delete_job(st, "gone", 50);
    consistent_then_remove(st, dir);
}

/* A format-7 store (no job_top): its jobs answer by scan, also after more batches; a new job
 * gets totals; the store is marked 8 and --check passes. */
static void
upgrade_from_format_7(void)
{
    char dir[] = "/tmp/rs-top-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    uint64_t t0 = rs_clock_realtime_ns() - 3600 * S;
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi meta, jtop;
    MDB_val k = {5, "format"}, v = {sizeof RS_STORE_FORMAT_7 - 1, RS_STORE_FORMAT_7};

    put_job(st, "old", 4, 4, true, t0, 0);
    rs_store_close(st);
    /* what a format-7 server leaves: no job_top, marker 7 */
    T_EQ(mdb_env_create(&env), 0);
    T_EQ(mdb_env_set_maxdbs(env, 32), 0);
    T_EQ(mdb_env_open(env, dir, 0, 0600), 0);
    T_EQ(mdb_txn_begin(env, NULL, 0, &txn), 0);
    T_EQ(mdb_dbi_open(txn, "meta", 0, &meta), 0);
    T_EQ(mdb_dbi_open(txn, "job_top", 0, &jtop), 0);
    T_EQ(mdb_drop(txn, jtop, 1), 0);
    T_EQ(mdb_put(txn, meta, &k, &v, 0), 0);
    T_EQ(mdb_txn_commit(txn), 0);
    mdb_env_close(env);

    T_OK(rs_store_open(dir, NULL, &st));
    same_answer(st, "old", false);
    put_job(st, "old", 4, 2, true, t0 + 500 * S, 100000);
    same_answer(st, "old", false);
    put_job(st, "new", 4, 2, true, t0, 0);
    same_answer(st, "new", true);
    struct rs_store_check_report rep;
    T_EQ(rs_store_check(st, &rep), 0);
    rs_store_close(st);
    T_EQ(mdb_env_create(&env), 0);
    T_EQ(mdb_env_set_maxdbs(env, 32), 0);
    T_EQ(mdb_env_open(env, dir, MDB_RDONLY, 0600), 0);
    T_EQ(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    T_EQ(mdb_dbi_open(txn, "meta", 0, &meta), 0);
    T_EQ(mdb_get(txn, meta, &k, &v), 0);
    T_CHECK(v.mv_size == sizeof RS_STORE_FORMAT - 1 &&
            memcmp(v.mv_data, RS_STORE_FORMAT, v.mv_size) == 0);
    mdb_txn_abort(txn);
    mdb_env_close(env);
    t_dir_remove(dir);
}

int
main(void)
{
    T_RUN(equal_through_rollups);
    T_RUN(rollup_keeps_the_span);
    T_RUN(scans_where_totals_cannot);
    T_RUN(upgrade_from_format_7);
    return T_DONE("query/top");
}
