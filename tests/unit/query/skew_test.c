/* Unit tests of NCCL wait skew on small hand-built cases with known answers: waits, skew, last
 * arriver, an exact tie, an instance seen by one rank only, a rank that joins late, clock offsets
 * between hosts (durations stay right, arrival spread shows the offset), per-op groups, window. */
#include "common/error.h"
#include "query/skew.h"
#include "tests/store_fixture.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {"nccl"};

/* One rank's collectives: (seq, op, start, duration) in microseconds. */
struct coll {
    uint64_t seq;
    uint32_t op;
    uint64_t start_us, dur_us;
};

static void
put_rank(rs_store *st, uint32_t rank, uint64_t offset_us, const struct coll *c, size_t n)
{
    struct rs_collective_record rec[16];

    for (size_t i = 0; i < n; i++)
        rec[i] = (struct rs_collective_record){(c[i].start_us + offset_us) * 1000,
                                               (c[i].start_us + offset_us + c[i].dur_us) * 1000,
                                               64,
                                               7,
                                               c[i].seq,
                                               c[i].op,
                                               0,
                                               17,
                                               false};
    struct rs_rank_batch rb = {.identity = T_IDENTITY("j", rank, 4, "GPU"),
                               T_RECORDS(strings, names, 1),
                               T_RECORDS(collectives, rec, (uint32_t)n)};
    t_store_put(st, &rb, 1);
}

static json_t *
rank_entry(json_t *report, int rank)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(report, "ranks"), i,
                       r) if (json_integer_value(json_object_get(r, "rank")) == rank) return r;
    return NULL;
}

static double
num(json_t *o, const char *a, const char *b)
{
    json_t *x = json_object_get(o, a);
    return json_number_value(b ? json_object_get(x, b) : x);
}

static void
known_answers(void)
{
    char dir[] = "/tmp/rs-skew-XXXXXX";
    rs_store *st = NULL;
    rs_store_read *r;
    json_t *rep = NULL;
    struct rs_skew_options all = {0, 0};
    const int AR = RS_COLL_ALLREDUCE, AG = RS_COLL_ALLGATHER;

    /* seq 0 (AllReduce): rank 2 arrives 300 us late -> durations 400/400/100: last = 2, skew 300
     * seq 1 (AllReduce): everyone together, durations 100/150/100 -> tie for last (0 and 2)
     * seq 2 (AllReduce): only rank 0 saw it -> unmatched
     * seq 0 (AllGather): rank 1 joins late and has only this one -> waits 0, ranks 0/2 wait 50
     * rank 1's clock is 5 ms ahead: durations (and so skew) unaffected, arrival spread shows it */
    const struct coll r0[] = {
        {0, AR, 1000, 400}, {1, AR, 2000, 100}, {2, AR, 3000, 100}, {0, AG, 4000, 80}};
    const struct coll r1[] = {{0, AR, 1000, 400}, {1, AR, 2000, 150}, {0, AG, 4050, 30}};
    const struct coll r2[] = {{0, AR, 1300, 100}, {1, AR, 2000, 100}, {0, AG, 4000, 80}};

    st = t_store_open(dir, NULL);
    put_rank(st, 0, 0, r0, 4);
    put_rank(st, 1, 5000, r1, 3);
    put_rank(st, 2, 0, r2, 3);
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_query_skew(r, "j", &all, &rep), 0);
    T_EQ(json_integer_value(json_object_get(rep, "instances")), 3);
    T_EQ(json_integer_value(json_object_get(rep, "unmatched_instances")), 1);
    T_EQ(json_integer_value(json_object_get(rep, "ties")), 1);
    T_CHECK(fabs(num(rep, "skew_ms", "max") - 0.3) < 1e-9);
    T_CHECK(fabs(num(rep, "skew_ms", "p50") - 0.05) < 1e-9); /* skews 0.3, 0.05, 0.05 */
    /* waits: rank 0 = 0.3 + 0 + 0.05, rank 1 = 0.3 + 0.05 + 0, rank 2 = 0 + 0 + 0.05 */
    T_CHECK(fabs(num(rank_entry(rep, 0), "wait_ms", NULL) - 0.35) < 1e-9);
    T_CHECK(fabs(num(rank_entry(rep, 1), "wait_ms", NULL) - 0.35) < 1e-9);
    T_CHECK(fabs(num(rank_entry(rep, 2), "wait_ms", NULL) - 0.05) < 1e-9);
    T_EQ(json_integer_value(json_object_get(rank_entry(rep, 2), "last_arrivals")), 1);
    T_EQ(json_integer_value(json_object_get(rank_entry(rep, 1), "last_arrivals")), 1);
    T_EQ(json_integer_value(json_object_get(rank_entry(rep, 1), "instances")), 3);
    /* the waiting each caused where it arrived last (the others' median wait): rank 2 0.3 ms at
     * the AllReduce, rank 1 0.05 ms at the AllGather, rank 0 nothing; shares of 0.35 ms */
    T_CHECK(fabs(num(rank_entry(rep, 2), "caused_ms", NULL) - 0.3) < 1e-9);
    T_CHECK(fabs(num(rank_entry(rep, 1), "caused_ms", NULL) - 0.05) < 1e-9);
    T_CHECK(num(rank_entry(rep, 0), "caused_ms", NULL) == 0);
    T_CHECK(fabs(num(rank_entry(rep, 2), "wait_share", NULL) - 0.3 / 0.35) < 1e-9);
    T_CHECK(fabs(num(rank_entry(rep, 1), "wait_share", NULL) - 0.05 / 0.35) < 1e-9);
    /* the 5 ms clock offset shows in arrival spread, not in skew */
    T_CHECK(num(rep, "arrival_spread_ms", "max") >= 4.9);
    T_EQ(json_array_size(json_object_get(rep, "communicators")), 2);
    json_decref(rep);

    /* a window that holds only the AllGather instance (it starts at 4.0 ms) */
    struct rs_skew_options late = {3500000, 0};
    T_EQ(rs_query_skew(r, "j", &late, &rep), 0);
    T_EQ(json_integer_value(json_object_get(rep, "instances")), 1);
    json_decref(rep);
    T_EQ(rs_query_skew(r, "nope", &all, &rep), RS_E_NOT_FOUND);
    rs_store_read_end(r);
    t_store_remove(st, dir);
}

int
main(void)
{
    T_RUN(known_answers);
    return T_DONE("query/skew");
}
