/* Unit tests of step inference from NCCL patterns with known answers: DDP-like (4 equal
 * AllReduces per step, 1 ms apart, a 10 ms step gap, 5% jitter), FSDP-like (AllGather x2 and
 * ReduceScatter x2 of two sizes), one AllReduce per step, two ranks that must agree on step
 * numbers, and patterns with no period (random kinds; equal kinds at random times). */
#include "query/step_infer.h"
#include "tests/t.h"

#include <stdlib.h>

#define MS 1000000ull

static uint64_t
jitter(uint64_t ns)
{
    return ns + (uint64_t)(rand() % 101) * ns / 2000; /* +0..5% */
}

/* `steps` steps of the pattern kinds[0..per) (op, bytes), gaps of 1 ms and a 10 ms step gap;
 * seq counted per op as NCCL does; the first step starts at t0. */
static size_t
pattern(struct rs_collective_record *c, size_t steps, const uint32_t *ops, const uint64_t *bytes,
        size_t per, uint64_t t0)
{
    uint64_t t = t0, seq[8] = {0};
    size_t n = 0;
    for (size_t s = 0; s < steps; s++) {
        t += jitter(10 * MS);
        for (size_t k = 0; k < per; k++) {
            uint64_t d = jitter(2 * MS);
            c[n++] = (struct rs_collective_record){t,      t + d, bytes[k], 7,    seq[ops[k]]++,
                                                   ops[k], 0,     17,       false};
            t += d + (k + 1 < per ? jitter(MS) : 0);
        }
    }
    return n;
}

static void
ddp(void)
{
    static struct rs_collective_record c[4 * 50];
    const uint32_t ops[] = {RS_COLL_ALLREDUCE, RS_COLL_ALLREDUCE, RS_COLL_ALLREDUCE,
                            RS_COLL_ALLREDUCE};
    const uint64_t bytes[] = {1 << 20, 1 << 20, 1 << 20, 1 << 20};
    struct rs_step_record *s;
    size_t n = pattern(c, 50, ops, bytes, 4, 1000 * MS), ns;
    uint32_t period;

    T_EQ(rs_infer_steps(c, n, &s, &ns, &period), 0);
    T_EQ(period, 4);
    T_EQ(ns, 49); /* every step but the first, whose start precedes the data */
    if (ns == 49) {
        T_EQ(s[0].step, 1); /* the first collective of step 1 has seq 4: 4 / 4 */
        T_EQ(s[0].start_ns, c[3].end_ns);
        T_EQ(s[0].end_ns, c[7].end_ns);
        for (size_t i = 1; i < ns; i++)
            T_CHECK(s[i].step == s[i - 1].step + 1 && s[i].start_ns == s[i - 1].end_ns);
    }
    free(s);
}

static void
fsdp(void)
{
    static struct rs_collective_record c[4 * 40];
    const uint32_t ops[] = {RS_COLL_ALLGATHER, RS_COLL_ALLGATHER, RS_COLL_REDUCESCATTER,
                            RS_COLL_REDUCESCATTER};
    const uint64_t bytes[] = {1 << 22, 1 << 21, 1 << 22, 1 << 21};
    struct rs_step_record *s;
    size_t n = pattern(c, 40, ops, bytes, 4, 1000 * MS), ns;
    uint32_t period;

    T_EQ(rs_infer_steps(c, n, &s, &ns, &period), 0);
    T_EQ(period, 4);
    T_EQ(ns, 39);
    T_EQ(ns ? s[0].step : 0, 1); /* AllGather seq 2, two per period */
    free(s);
}

static void
one_per_step(void)
{
    static struct rs_collective_record c[30];
    const uint32_t ops[] = {RS_COLL_ALLREDUCE};
    const uint64_t bytes[] = {1 << 20};
    struct rs_step_record *s;
    size_t n = pattern(c, 30, ops, bytes, 1, 1000 * MS), ns;
    uint32_t period;

    T_EQ(rs_infer_steps(c, n, &s, &ns, &period), 0);
    T_EQ(period, 1);
    T_EQ(ns, 29);
    free(s);
}

static void
ranks_agree(void)
{
    static struct rs_collective_record a[4 * 20], b[4 * 20];
    const uint32_t ops[] = {RS_COLL_ALLREDUCE, RS_COLL_ALLREDUCE, RS_COLL_ALLREDUCE,
                            RS_COLL_ALLREDUCE};
    const uint64_t bytes[] = {8, 8, 8, 8};
    struct rs_step_record *sa, *sb;
    size_t na = pattern(a, 20, ops, bytes, 4, 1000 * MS), nb, ma, mb;
    uint32_t pa, pb;

    /* rank b's data starts one step later and its clock is 3 ms off */
    nb = pattern(b, 20, ops, bytes, 4, 1003 * MS) - 4;
    for (size_t i = 0; i < nb; i++)
        b[i] = b[i + 4];
    T_EQ(rs_infer_steps(a, na, &sa, &ma, &pa), 0);
    T_EQ(rs_infer_steps(b, nb, &sb, &mb, &pb), 0);
    T_CHECK(ma > 5 && mb > 5 && sa[ma - 1].step == sb[mb - 1].step);
    free(sa);
    free(sb);
}

static void
no_period(void)
{
    static struct rs_collective_record c[200];
    struct rs_step_record *s;
    size_t ns;
    uint32_t period;
    uint64_t t = 0;

    for (size_t i = 0; i < 200; i++) { /* random kinds */
        t += (uint64_t)(rand() % 10 + 1) * MS;
        c[i] = (struct rs_collective_record){
            t, t + MS, (uint64_t)(rand() % 5), 7, i, (uint32_t)(1 + rand() % 3), 0, 17, false};
        t += MS;
    }
    T_EQ(rs_infer_steps(c, 200, &s, &ns, &period), 0);
    T_EQ(ns, 0);
    T_EQ(period, 0);
    free(s);
    for (size_t i = 0; i < 200; i++) /* equal kinds, random times: no step gap stands out */
        c[i].op = RS_COLL_ALLREDUCE, c[i].bytes = 8;
    T_EQ(rs_infer_steps(c, 200, &s, &ns, &period), 0);
    T_EQ(ns, 0);
    free(s);
    T_EQ(rs_infer_steps(c, 0, &s, &ns, &period), 0);
    T_EQ(ns, 0);
    free(s);
}

int
main(void)
{
    srand(5);
    T_RUN(ddp);
    T_RUN(fsdp);
    T_RUN(one_per_step);
    T_RUN(ranks_agree);
    T_RUN(no_period);
    return T_DONE("query/step_infer");
}
