/* Unit tests of intermittent straggler detection (query/intermittent.h) on hand-built steps: 16
 * ranks, 90 steps of 30 ms of work with ±0.3% noise. A rank 40% slower on one step in 4 is found
 * with its duty, tail slowdown, time lost and first slow step; random spikes spread over every rank
 * (3% of rank-steps) are not; a block of slow steps (a straggler's onset or recovery) is not; a
 * rank slow on most steps is not (the steady rule's case); nor one that never arrived last on its
 * slow steps; steps a capture traced on some ranks only are not compared; among 2 ranks, 9 spikes
 * on one against 1 on the other are not, 21 slow steps in 4 against none are; too few windows:
 * nothing. */
#include "query/intermittent.h"
#include "tests/t.h"
#include "tests/t_noise.h"

#include <stdlib.h>
#include <string.h>

#define RANKS 16
#define STEPS 90

/* factor(r, step) > 1: that step of rank r is slower by it; `late`: slow steps arrive last */
static struct rs_rank_steps *
build_n(uint32_t n_ranks, double (*factor)(uint32_t r, uint32_t step), bool late)
{
    struct rs_rank_steps *rk = calloc(n_ranks, sizeof *rk);
    for (uint32_t r = 0; r < n_ranks; r++) {
        rk[r].rank = r;
        rk[r].n = STEPS;
        rk[r].steps = calloc(STEPS, sizeof *rk[r].steps);
        for (uint32_t i = 0; i < STEPS; i++) {
            double f = factor(r, i) * (1 + 0.003 * t_noise(1000003ull * i + r));
            rk[r].steps[i] = (struct rs_step_summary){
                .step = i,
                .start_ns = 1000000000ull + i * 40000000ull,
                .end_ns = 1000000000ull + i * 40000000ull + 39000000ull,
                .compute_ns = (uint64_t)(30e6 * f),
                .host_gap_ns = 100000,
                .last_arrivals = late && factor(r, i) > 1.0 ? 4 : (i % RANKS == r ? 1 : 0)};
        }
    }
    return rk;
}

static struct rs_rank_steps *
build(double (*factor)(uint32_t r, uint32_t step), bool late)
{
    return build_n(RANKS, factor, late);
}

static void
free_n(struct rs_rank_steps *rk, uint32_t n_ranks)
{
    for (uint32_t r = 0; r < n_ranks; r++)
        free(rk[r].steps);
    free(rk);
}

static void
free_ranks(struct rs_rank_steps *rk)
{
    for (uint32_t r = 0; r < RANKS; r++)
        free(rk[r].steps);
    free(rk);
}

static double
quarter(uint32_t r, uint32_t step) /* rank 9: 40% slower on every 4th step from step 6 */
{
    return r == 9 && step >= 6 && step % 4 == 2 ? 1.4 : 1.0;
}

static double
spikes(uint32_t r, uint32_t step) /* 3% of rank-steps, any rank */
{
    return t_noise(7919ull * step + 104729ull * r + 5) > 0.94 ? 1.4 : 1.0;
}

static double
block(uint32_t r, uint32_t step) /* rank 4 slow on steps 30 .. 64, then recovered */
{
    return r == 4 && step >= 30 && step < 65 ? 1.4 : 1.0;
}

static double
mostly(uint32_t r, uint32_t step) /* rank 2 slow on 7 steps of 8 */
{
    return r == 2 && step % 8 != 0 ? 1.4 : 1.0;
}

static size_t
find(double (*factor)(uint32_t, uint32_t), bool late, struct rs_intermittent **out)
{
    struct rs_rank_steps *rk = build(factor, late);
    size_t n = 99;
    int rc = rs_intermittent_find(rk, RANKS, 0, STEPS - 1, 30, 2, 0.06, out, &n);
    free_ranks(rk);
    T_EQ(rc, 0); /* a failure leaves n at 99: the caller's count checks fail too */
    return n;
}

static void
recurring(void)
{
    struct rs_intermittent *v;
    T_EQ(find(quarter, true, &v), 1);
    T_EQ(v[0].index, 9);
    T_EQ(v[0].first_slow_step, 6);
    T_EQ(v[0].first_slow_ns, 1000000000ull + 6 * 40000000ull + 100000); /* its first kernel */
    T_EQ(v[0].slow_steps, 21);                                          /* 6, 10, .., 86 */
    T_CHECK(v[0].duty > 0.23 && v[0].duty < 0.24);
    T_CHECK(v[0].tail_slowdown > 1.38 && v[0].tail_slowdown < 1.42);
    T_CHECK(v[0].lost_ms > 21 * 11.5 && v[0].lost_ms < 21 * 12.5); /* 12 ms each */
    T_CHECK(v[0].last_share == 1.0);
    free(v);
}

static void
not_intermittent(void)
{
    struct rs_intermittent *v;
    T_EQ(find(spikes, true, &v), 0);
    T_CHECK(v == NULL);
    T_EQ(find(block, true, &v), 0);
    T_EQ(find(mostly, true, &v), 0);
    T_EQ(find(quarter, false, &v), 0); /* slow, but it held nobody up */
}

/* Captures that trace ranks 3 and 5 for 2 steps in 8 (an evaluator capturing a suspect and a
 * healthy peer, again and again): there the two show their kernels (30 ms) and the untraced peers
 * no compute and a host gap up to their first NCCL operation (21 ms) — steps not comparable
 * (mixed_steps.h), left out; compared, rank 3 (last on those steps: the tracing slows it) read as
 * 40% slower on a recurring quarter of its steps, an intermittent straggler. */
static void
captures_are_not_slow_steps(void)
{
    struct rs_rank_steps *rk = build(block, false);
    struct rs_intermittent *v;
    size_t n = 99;
    for (uint32_t r = 0; r < RANKS; r++)
        for (uint32_t i = 0; i < STEPS; i++) {
            struct rs_step_summary *x = &rk[r].steps[i];
            x->compute_ns = 30000000ull + 1000ull * (i % 7); /* block's rank 4: as its peers */
            x->last_arrivals = 0;
            if (i % 8 != 2 && i % 8 != 3)
                continue;
            if (r == 3 || r == 5) {
                x->last_arrivals = r == 3 ? 4 : 0;
                continue;
            }
            x->host_gap_ns = x->compute_ns * 7 / 10; /* untraced: up to its first NCCL op */
            x->compute_ns = 0;
        }
    T_OK(rs_intermittent_find(rk, RANKS, 0, STEPS - 1, 30, 2, 0.06, &v, &n));
    T_EQ(n, 0);
    T_CHECK(v == NULL);
    free(v);
    free_ranks(rk);
}

static double
pair_spikes(uint32_t r, uint32_t step) /* ddp_tracegen's seed 50: 9 steps of rank 0, 1 of rank 1 */
{
    static const uint32_t at[] = {14, 19, 26, 28, 38, 53, 60, 65, 77};
    if (r == 1)
        return step == 45 ? 1.4 : 1.0;
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
        if (at[i] == step)
            return 1.4;
    return 1.0;
}

static double
pair_quarter(uint32_t r, uint32_t step) /* rank 1: 40% slower on every 4th step from step 6 */
{
    return quarter(r == 1 ? 9 : 0, step);
}

/* Two ranks: the peer's slow steps are the only evidence of the spike rate. ddp_tracegen's noisy
 * 2-rank job with spikes (seed 50, buckets after backward) put 9 slow steps of 90 on one rank (a
 * duty of 0.1, 9 separate runs, last on each) and 1 on the other: 9 or more of 10 slow steps fall
 * on one given rank of two with chance 11/1024, which random spikes on any of many jobs reach — an
 * intermittent verdict (confidence 1.00) before. 21 slow steps against 0 (chance 0.5^21) still
 * are intermittent. */
static void
two_ranks(void)
{
    struct rs_intermittent *v;
    size_t n = 99;
    struct rs_rank_steps *rk = build_n(2, pair_spikes, true);
    T_OK(rs_intermittent_find(rk, 2, 0, STEPS - 1, 30, 2, 0.06, &v, &n));
    T_EQ(n, 0);
    T_CHECK(v == NULL);
    free_n(rk, 2);

    rk = build_n(2, pair_quarter, true);
    T_OK(rs_intermittent_find(rk, 2, 0, STEPS - 1, 30, 2, 0.06, &v, &n));
    T_EQ(n, 1);
    if (n == 1) {
        T_EQ(v[0].index, 1);
        T_EQ(v[0].slow_steps, 21);
    }
    free(v);
    free_n(rk, 2);
}

static void
too_few_windows(void)
{
    struct rs_rank_steps *rk = build(quarter, true);
    struct rs_intermittent *v;
    size_t n = 99;
    T_OK(rs_intermittent_find(rk, RANKS, 60, STEPS - 1, 30, 2, 0.06, &v, &n));
    T_EQ(n, 0);
    T_CHECK(v == NULL);
    free_ranks(rk);
}

int
main(void)
{
    T_RUN(recurring);
    T_RUN(not_intermittent);
    T_RUN(captures_are_not_slow_steps);
    T_RUN(two_ranks);
    T_RUN(too_few_windows);
    return T_DONE("query/intermittent");
}
