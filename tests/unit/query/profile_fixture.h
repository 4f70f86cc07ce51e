/* The hand-built job that the query unit tests share (profile_test, pprof_export_test): 2 ranks,
 * 10 steps of 1 ms from T0. Per step, rank 0 runs kernel "a" twice (100 us each) and "b" once
 * (50 us); rank 1 runs "a" at 150 us and an extra kernel "c" (20 us); both spend 30 us in one
 * AllReduce. PC samples (cubin CRC 1): rank 0 "a": long_scoreboard 10 at 0x80, selected 30 at
 * 0xc0; rank 1 "a": long_scoreboard 40 at 0x80, selected 30 at 0xc0. Rank 1's host waits in one
 * Stream Sync of 200 us per step (host time: in no GPU total). Header-only: each test binary is
 * one translation unit. */
#ifndef RS_TESTS_UNIT_QUERY_PROFILE_FIXTURE_H
#define RS_TESTS_UNIT_QUERY_PROFILE_FIXTURE_H

#include "storage/store.h"
#include "tests/store_fixture.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS 10
#define US 1000ull
#define T0 (1000000 * US)
static const char *const names[] = {"a",
                                    "b",
                                    "c",
                                    "nccl",
                                    "smsp__pcsamp_warps_issue_stalled_long_scoreboard",
                                    "smsp__pcsamp_warps_issue_stalled_selected"};

/* Stores rank `rank` of job `job`; with_stalls = false leaves out the PC samples. */
static void
put_rank_of(rs_store *st, const char *job, uint32_t rank, bool with_stalls)
{
    struct rs_kernel_record k[STEPS * 4];
    struct rs_collective_record c[STEPS];
    struct rs_step_record s[STEPS];
    struct rs_memcpy_record y[STEPS];
    struct rs_stall_record x[2] = {{0x80, rank ? 40 : 10, 0, 4, 1}, {0xc0, 30, 0, 5, 1}};
    uint32_t n = 0;

    for (uint32_t i = 0; i < STEPS; i++) {
        uint64_t t = T0 + i * 1000 * US, a = rank ? 150 * US : 100 * US;
        k[n++] = (struct rs_kernel_record){t + 10 * US, t + 10 * US + a, 0, 7, 0, 0};
        k[n++] = (struct rs_kernel_record){t + 300 * US, t + 300 * US + a, 0, 7, 0, 0};
        k[n++] = (struct rs_kernel_record){t + 600 * US, t + 650 * US, 1, 7, 0, 0};
        if (rank)
            k[n++] = (struct rs_kernel_record){t + 700 * US, t + 720 * US, 2, 7, 0, 0};
        c[i] = (struct rs_collective_record){
            t + 800 * US, t + 830 * US, 8, 1, i, RS_COLL_ALLREDUCE, 3, 17, false};
        s[i] = (struct rs_step_record){.step = i, .start_ns = t, .end_ns = t + 1000 * US};
        y[i] = (struct rs_memcpy_record){t + 830 * US, t + 1030 * US, 0, RS_SYNC_STREAM, 17};
    }
    struct rs_rank_batch rb = {.identity = T_IDENTITY_OF(job, rank, rank, 2, "node", "GPU-x", 1),
                               .clock = {T0 + 5000 * US, T0 + 5000 * US},
                               T_RECORDS(strings, names, 6),
                               T_RECORDS(kernels, k, n),
                               T_RECORDS(collectives, c, STEPS),
                               T_RECORDS(memcpys, y, rank ? STEPS : 0),
                               T_RECORDS(steps, s, STEPS),
                               T_RECORDS(stalls, x, with_stalls ? 2 : 0)};
    t_store_put(st, &rb, 1);
}

static void
put_rank(rs_store *st, uint32_t rank)
{
    put_rank_of(st, "job", rank, true);
}

/* A store in a new directory made from the mkdtemp template `dir`, holding ranks 0 and 1 of
 * "job", with a read handle. */
static rs_store_read *
fixture_open(char *dir, rs_store **st)
{
    rs_store_read *r = NULL;

    *st = NULL;
    *st = t_store_open(dir, NULL);
    put_rank(*st, 0);
    put_rank(*st, 1);
    T_EQ(rs_store_read_begin(*st, &r), 0);
    return r;
}

/* Rolls every kernel record of an idle store up into 1 ms windows (storage "Rollups": whole
 * windows only, before the end of the newest summarized step — the fixture's steps last 1 ms)
 * after storing a summary of each step of `job`'s `ranks` ranks (records of steps without one
 * stay raw); returns how many records were rolled up. (inline: not every test uses it.) */
static inline uint64_t
fixture_roll_up(rs_store *st, const char *job, uint32_t ranks)
{
    struct rs_store_rollup ru = {.now_ns = UINT64_MAX / 2, .raw_ns = 1, .window_ns = 1000000};
    struct rs_step_summary sum[STEPS];
    rs_store_write *w;
    bool done = false;

    memset(sum, 0, sizeof sum);
    for (uint32_t i = 0; i < STEPS; i++) {
        sum[i].step = i;
        sum[i].start_ns = T0 + i * 1000 * US;
        sum[i].end_ns = sum[i].start_ns + 1000 * US;
    }
    T_EQ(rs_store_write_begin(st, &w), 0);
    for (uint32_t r = 0; r < ranks; r++)
        T_EQ(rs_store_step_summaries_put(w, job, r, sum, STEPS), 0);
    T_EQ(rs_store_write_commit(w), 0);
    while (!done) {
        T_EQ(rs_store_write_begin(st, &w), 0);
        T_EQ(rs_store_rollup_step(w, &ru, 1000, &done), 0);
        T_EQ(rs_store_write_commit(w), 0);
    }
    return ru.records;
}

/* Ends the read, closes the store and removes its directory. */
static void
fixture_close(const char *dir, rs_store *st, rs_store_read *r)
{

    rs_store_read_end(r);
    t_store_remove(st, dir);
}

#endif
