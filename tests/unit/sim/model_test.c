/* Unit tests of the simulator's job model: lockstep through AllReduce, the straggler arrives last
 * and waits least, host stalls delay arrival, noise-free runs are exact, seeds are deterministic.
 */
#include "sim/model.h"
#include "sim/profile.h"
#include "tests/t.h"

#include <math.h>
#include <string.h>

#define RANKS 4

struct tally {
    uint64_t coll_ns[RANKS], kernel_ns[RANKS], step_end[RANKS], step_start[RANKS];
    uint64_t coll_start_last_bucket[RANKS];
    uint64_t coll_first_ns[RANKS], coll_rest_ns[RANKS]; /* a step's first bucket; the others */
    unsigned kernels[RANKS], colls[RANKS], steps[RANKS];
    uint64_t seq_seen[RANKS];
};

static void
on_kernel(void *arg, uint32_t r, const char *name, const struct rs_kernel_record *k)
{
    struct tally *t = arg;
    t->kernel_ns[r] += k->end_ns - k->start_ns;
    t->kernels[r]++;
    if (k->end_ns < k->start_ns || !name[0])
        t->kernels[r] += 1000000; /* poisons the count */
}

static void
on_memcpy(void *arg, uint32_t r, const struct rs_memcpy_record *m)
{
}

static void
on_coll(void *arg, uint32_t r, const char *name, const struct rs_collective_record *c)
{
    struct tally *t = arg;
    t->coll_ns[r] += c->end_ns - c->start_ns;
    if (c->seq % 4 == 0)
        t->coll_first_ns[r] += c->end_ns - c->start_ns;
    else
        t->coll_rest_ns[r] += c->end_ns - c->start_ns;
    t->coll_start_last_bucket[r] = c->start_ns;
    if (c->seq != t->seq_seen[r]++)
        t->colls[r] += 1000000; /* sequence numbers must be 0, 1, 2, ... per rank */
    t->colls[r]++;
}

static void
on_step(void *arg, uint32_t r, const struct rs_step_record *s)
{
    struct tally *t = arg;
    t->step_start[r] = s->start_ns;
    t->step_end[r] = s->end_ns;
    t->steps[r]++;
}

static void
run(const struct sim_params *p, int steps, struct tally *t)
{
    struct sim_sink sink = {t, on_kernel, on_memcpy, on_coll, on_step};
    sim_model *m = NULL;

    memset(t, 0, sizeof *t);
    if (sim_model_new(p, 1000000000ull, &m) != 0)
        return;
    for (int s = 0; s < steps; s++)
        sim_model_step(m, (uint64_t)s, &sink);
    sim_model_free(m);
}

static struct sim_params
params(void)
{
    return (struct sim_params){.ranks = RANKS,
                               .step_ms = 34.0,
                               .slow_rank = -1,
                               .stall_rank = -1,
                               .seed = 1,
                               .comm_hash = 7,
                               .kernel_split = 1};
}

static void
lockstep_without_faults(void)
{
    struct sim_params p = params();
    struct tally t;

    run(&p, 10, &t);
    for (int r = 0; r < RANKS; r++) {
        T_EQ(t.steps[r], 10);
        T_EQ(t.colls[r], 40); /* 4 buckets per step */
        T_EQ(t.kernels[r], 10 * 51);
        T_EQ(t.step_end[r], t.step_end[0]); /* every rank ends together */
    }
    /* without noise the step takes the requested time (within 3%) */
    double step_ms = (double)(t.step_end[0] - t.step_start[0]) / 1e6;
    T_CHECK(fabs(step_ms - 34.0) < 34.0 * 0.03);
}

static void
gpu_straggler_waits_least(void)
{
    struct sim_params p = params();
    struct tally base, slow;

    run(&p, 10, &base);
    p.slow_rank = 2;
    p.slowdown = 0.10;
    p.onset_step = 0;
    run(&p, 10, &slow);
    for (int r = 0; r < RANKS; r++)
        if (r != 2)
            T_CHECK(slow.coll_ns[2] < slow.coll_ns[r]);    /* it arrives last, so it waits least */
    T_CHECK(slow.kernel_ns[2] > base.kernel_ns[2] * 1.09); /* its kernels are 10% slower */
    /* and the whole job runs at its pace */
    T_CHECK(slow.step_end[0] - slow.step_start[0] > base.step_end[0] - base.step_start[0]);
}

static void
host_stall_arrives_late(void)
{
    struct sim_params p = params();
    struct tally t;

    p.stall_rank = 1;
    p.stall_ms = 5.0;
    run(&p, 5, &t);
    for (int r = 0; r < RANKS; r++)
        if (r != 1)
            T_CHECK(t.coll_ns[1] < t.coll_ns[r]);
    /* kernels themselves are not slower: only their start is late */
    T_EQ(t.kernel_ns[1], t.kernel_ns[0]);
}

static void
onset_and_determinism(void)
{
    struct sim_params p = params();
    struct tally a, b;

    p.noise = 0.01;
    p.slow_rank = 3;
    p.slowdown = 0.3;
    p.onset_step = 5;
    run(&p, 5, &a); /* steps 0-4: before the onset, rank 3 is not slower */
    T_CHECK(a.kernel_ns[3] < a.kernel_ns[0] * 1.05);
    run(&p, 20, &a);
    run(&p, 20, &b);
    T_CHECK(memcmp(&a, &b, sizeof a) == 0); /* same seed, same run */
    p.seed = 2;
    run(&p, 20, &b);
    T_CHECK(memcmp(&a, &b, sizeof a) != 0);
}

/* Buckets back to back after the backward pass: only a step's first AllReduce shows the slow
 * rank's lateness (it waits least there); the others start together on every rank and last the
 * same. Interleaved buckets show it at the later ones too. */
static void
buckets_after_backward(void)
{
    struct sim_params p = params();
    struct tally after, inter;

    p.slow_rank = 2;
    p.slowdown = 0.10;
    p.buckets_after = true;
    run(&p, 10, &after);
    p.buckets_after = false;
    run(&p, 10, &inter);
    for (int r = 0; r < RANKS; r++) {
        T_EQ(after.colls[r], 40);
        if (r == 2)
            continue;
        T_CHECK(after.coll_first_ns[2] < after.coll_first_ns[r]);
        T_EQ(after.coll_rest_ns[2], after.coll_rest_ns[r]);
        T_CHECK(inter.coll_rest_ns[2] < inter.coll_rest_ns[r]);
    }
}

int
main(void)
{
    T_RUN(lockstep_without_faults);
    T_RUN(gpu_straggler_waits_least);
    T_RUN(host_stall_arrives_late);
    T_RUN(onset_and_determinism);
    T_RUN(buckets_after_backward);
    return T_DONE("sim/model");
}
