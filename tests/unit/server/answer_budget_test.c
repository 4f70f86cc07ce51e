/* Unit tests of the answer budget (server/answer_budget.c): reservations and answers being
 * written stay within the limit; an answer is admitted into an empty budget whatever its size;
 * a route's reservation follows its last answer; a limit of 0 bounds nothing. */
#include "server/answer_budget.h"
#include "tests/t.h"

#define MIB (1ull << 20)

static void
bounded(void)
{
    struct rs_answer_budget b = {.limit = 10 * MIB};

    T_CHECK(rs_answer_budget_admits(&b, 0, 100 * MIB)); /* nothing in flight: admitted */
    T_CHECK(rs_answer_budget_admits(&b, 6 * MIB, 4 * MIB));
    T_CHECK(!rs_answer_budget_admits(&b, 6 * MIB, 4 * MIB + 1));
    T_CHECK(!rs_answer_budget_admits(&b, 11 * MIB, 1)); /* already over */
    T_EQ(b.refused, 2);
    /* a first scan reserves the first guess; the route's next one twice its last answer */
    uint64_t r = rs_answer_budget_reserve(&b, 0, 3);
    T_EQ(r, RS_ANSWER_BUDGET_FIRST_GUESS);
    T_EQ(rs_answer_budget_in_flight(&b, 2 * MIB), r + 2 * MIB);
    rs_answer_budget_built(&b, 3, r, 3 * MIB);
    T_EQ(b.building, 0);
    r = rs_answer_budget_reserve(&b, 0, 3);
    T_EQ(r, 6 * MIB);
    T_EQ(rs_answer_budget_reserve(&b, 0, 3), 0); /* 6 + 6 > 10 */
    T_EQ(rs_answer_budget_reserve(&b, 0, 4), RS_ANSWER_BUDGET_FIRST_GUESS); /* 6 + 1 */
    T_EQ(b.building, 7 * MIB);
    rs_answer_budget_built(&b, 3, r, 0); /* failed: nothing learnt */
    rs_answer_budget_built(&b, 4, RS_ANSWER_BUDGET_FIRST_GUESS, 10);
    T_EQ(b.building, 0);
    T_EQ(b.estimate[3], 6 * MIB);
    T_EQ(b.estimate[4], RS_ANSWER_BUDGET_FIRST_GUESS); /* small answers: the floor */
    rs_answer_budget_built(&b, 99, 0, 5 * MIB);         /* a kind beyond the table: ignored */
}

static void
unbounded(void)
{
    struct rs_answer_budget b = {.limit = 0};

    T_CHECK(rs_answer_budget_admits(&b, UINT64_MAX / 2, UINT64_MAX / 4));
    T_CHECK(rs_answer_budget_reserve(&b, UINT64_MAX / 2, 1) > 0);
    T_EQ(b.refused, 0);
}

int
main(void)
{
    T_RUN(bounded);
    T_RUN(unbounded);
    return T_DONE("server/answer_budget");
}
