/* Unit tests of the reads that keep query cost independent of a job's length: the newest step of a
 * rank, steps from a step number on, and the collectives range scan — checked against the full scan
 * on a job of 2 communicators x 2 ops x 400 instances x 3 ranks with a gap in the sequence numbers,
 * for 300 random ranges. Deleting the job removes its step summaries; the check walks them. */
#include "common/error.h"
#include "storage/store.h"
#include "tests/store_fixture.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEQS 400
#define RANKS 3
#define MS 1000000ull
#define T0 (1000000000ull * 1000)

static const char *const names[] = {"nccl"};

static void
put_job(rs_store *st)
{
    static struct rs_collective_record c[2 * 2 * SEQS];
    struct rs_step_record s[50];

    for (uint32_t r = 0; r < RANKS; r++) {
        size_t n = 0;
        for (uint64_t comm = 1; comm <= 2; comm++)
            for (uint32_t op = RS_COLL_ALLREDUCE; op <= RS_COLL_ALLGATHER; op++)
                for (uint64_t seq = 0; seq < SEQS; seq++) {
                    uint64_t q = seq < 200 ? seq : seq + 1000; /* a gap in the numbers */
                    uint64_t t = T0 + seq * 10 * MS + comm * MS + op * 100000 + r * 1000;
                    c[n++] = (struct rs_collective_record){t, t + MS, 8, comm, q, op, 0, 17, false};
                }
        for (uint64_t k = 0; k < 50; k++)
            s[k] = (struct rs_step_record){
                .step = k * 2 + 10, .start_ns = T0 + k * 80 * MS, .end_ns = T0 + (k + 1) * 80 * MS};
        struct rs_rank_batch rb = {.identity = T_IDENTITY("job", r, RANKS, "G"),
                                   T_RECORDS(strings, names, 1),
                                   T_RECORDS(collectives, c, (uint32_t)n),
                                   T_RECORDS(steps, s, 50)};
        t_store_put(st, &rb, 1);
    }
}

struct tally {
    uint64_t t0, t1, in_range, seen, outside_margin;
};

static int
count(void *arg, uint32_t rank, const struct rs_collective_record *c)
{
    struct tally *t = arg;
    t->seen++;
    if (c->start_ns >= t->t0 && c->start_ns < t->t1)
        t->in_range++;
    if (c->start_ns + RS_STORE_COLL_MARGIN_NS + 20 * MS < t->t0 ||
        c->start_ns >= t->t1 + RS_STORE_COLL_MARGIN_NS + 20 * MS)
        t->outside_margin++;
    return 0;
}

static int
first_step(void *arg, const struct rs_step_record *s)
{
    uint64_t *first = arg;
    if (*first == UINT64_MAX)
        *first = s->step;
    return 0;
}

static void
lookups(rs_store *st)
{
    rs_store_read *r;
    uint64_t last = 0, first = UINT64_MAX;

    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_store_last_step(r, "job", 1, &last), 0);
    T_EQ(last, 49 * 2 + 10);
    T_EQ(rs_store_last_step(r, "job", 7, &last), RS_E_NOT_FOUND);
    T_EQ(rs_store_last_step(r, "nope", 0, &last), RS_E_NOT_FOUND);
    T_EQ(rs_store_steps_scan(r, "job", 2, 51, first_step, &first), 0);
    T_EQ(first, 52); /* the first step numbered 51 or higher */

    srand(3);
    for (int i = 0; i < 300; i++) {
        uint64_t a = T0 + (uint64_t)(rand() % 5000) * MS, len = (uint64_t)(rand() % 2000) * MS;
        struct tally full = {a, a + len, 0, 0, 0}, range = full;
        T_EQ(rs_store_collectives_scan(r, "job", count, &full), 0);
        T_EQ(rs_store_collectives_scan_range(r, "job", a, a + len, count, &range), 0);
        T_EQ(range.in_range, full.in_range);
        T_EQ(range.outside_margin, 0);
    }
    struct tally none = {0, 1, 0, 0, 0};
    T_EQ(rs_store_collectives_scan_range(r, "nope", 0, UINT64_MAX - 1, count, &none), 0);
    T_EQ(none.seen, 0);
    rs_store_read_end(r);
}

static void
summaries_deleted_with_job(rs_store *st)
{
    struct rs_step_summary sum = {10, T0, T0 + 80 * MS, 80 * MS, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    struct rs_store_check_report rep;
    rs_store_write *w;
    uint64_t deleted = 0;
    bool done = false;

    T_EQ(rs_store_write_begin(st, &w), 0);
    T_EQ(rs_store_step_summaries_put(w, "job", 0, &sum, 1), 0);
    T_EQ(rs_store_write_commit(w), 0);
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.step_summaries, 1);
    T_EQ(rs_store_write_begin(st, &w), 0);
    T_EQ(rs_store_delete_job(w, "job", 1000000, &deleted, &done), 0);
    T_EQ(rs_store_write_commit(w), 0);
    T_CHECK(done);
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.step_summaries, 0);
}

int
main(void)
{
    char dir[] = "/tmp/rs-stepsum-XXXXXX";
    rs_store *st = NULL;

    st = t_store_open(dir, NULL);
    put_job(st);
    T_RUN_ARG(lookups, st);
    T_RUN_ARG(summaries_deleted_with_job, st);
    t_store_remove(st, dir);
    return T_DONE("storage/stepsum");
}
