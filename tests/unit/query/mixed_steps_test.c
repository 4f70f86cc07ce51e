/* Unit tests of the steps traced on some ranks only (query/mixed_steps.c): a step is mixed where
 * some ranks having it ran compute kernels and some none; steps all or none traced are not, nor
 * steps outside the range; ranks numbered far apart keep the range bounded. */
#include "query/mixed_steps.h"
#include "tests/t.h"

#include <stdlib.h>

/* Rank steps first .. first + n - 1, traced (compute) where traced(step) says. */
static struct rs_rank_steps
rank(uint32_t r, uint64_t first, size_t n, bool (*traced)(uint32_t, uint64_t))
{
    struct rs_rank_steps rk = {.rank = r, .n = n, .steps = calloc(n, sizeof *rk.steps)};
    for (size_t k = 0; k < n; k++)
        rk.steps[k] = (struct rs_step_summary){.step = first + k,
                                               .step_ns = 40000000,
                                               .compute_ns = traced(r, first + k) ? 30000000 : 0};
    return rk;
}

/* ranks 1 and 2 captured over steps 3 - 5; every rank traced at step 8 (a window) */
static bool
capture(uint32_t r, uint64_t step)
{
    return ((r == 1 || r == 2) && step >= 3 && step <= 5) || step == 8;
}

static void
captured_steps_are_mixed(void)
{
    struct rs_rank_steps rk[4] = {rank(0, 0, 10, capture), rank(1, 0, 10, capture),
                                  rank(2, 0, 10, capture), rank(3, 2, 8, capture)};
    struct rs_mixed_steps m;

    T_OK(rs_mixed_steps_find(rk, 4, &m));
    for (uint64_t s = 0; s < 10; s++)
        T_EQ(rs_mixed_steps_has(&m, s), s >= 3 && s <= 5);
    T_EQ(m.n_mixed, 3);
    T_CHECK(!rs_mixed_steps_has(&m, 11) && !rs_mixed_steps_has(&m, UINT64_MAX));
    rs_mixed_steps_fini(&m);
    rs_mixed_steps_fini(&m); /* idempotent */
    T_CHECK(!rs_mixed_steps_has(&m, 4));
    /* rank 1 alone has step 5 in this set: it is not mixed (no untraced rank there) */
    T_OK(rs_mixed_steps_find(&rk[1], 1, &m));
    T_EQ(m.n_mixed, 0);
    rs_mixed_steps_fini(&m);
    for (int i = 0; i < 4; i++)
        free(rk[i].steps);
}

static bool
rank0_only(uint32_t r, uint64_t step)
{
    (void)step;
    return r == 0;
}

/* A rank numbered a billion steps ahead: the range stays RS_MIXED_STEPS_MAX_SPAN, its steps are
 * covered, the far older ones count as not mixed. */
static void
far_apart_ranks(void)
{
    const uint64_t far = 1000000000ull;
    struct rs_rank_steps rk[2] = {rank(0, far, 4, rank0_only), rank(1, 0, 4, rank0_only)};
    struct rs_rank_steps both[2] = {rank(0, far, 4, rank0_only), rank(1, far, 4, rank0_only)};
    struct rs_mixed_steps m;

    T_OK(rs_mixed_steps_find(rk, 2, &m));
    T_CHECK(m.n <= RS_MIXED_STEPS_MAX_SPAN);
    T_EQ(m.n_mixed, 0); /* no step both have */
    rs_mixed_steps_fini(&m);
    T_OK(rs_mixed_steps_find(both, 2, &m));
    T_EQ(m.n, 4);
    T_CHECK(rs_mixed_steps_has(&m, far + 3));
    rs_mixed_steps_fini(&m);
    for (int i = 0; i < 2; i++) {
        free(rk[i].steps);
        free(both[i].steps);
    }
}

int
main(void)
{
    T_RUN(captured_steps_are_mixed);
    T_RUN(far_apart_ranks);
    return T_DONE("query/mixed_steps");
}
