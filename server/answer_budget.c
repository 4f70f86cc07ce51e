/* The memory budget of REST answers in flight (see answer_budget.h). */
#include "server/answer_budget.h"

bool
rs_answer_budget_admits(struct rs_answer_budget *b, uint64_t sending, uint64_t bytes)
{
    uint64_t used = b->building + sending;

    if (b->limit == 0 || used == 0 || (used <= b->limit && bytes <= b->limit - used))
        return true;
    b->refused++;
    return false;
}

uint64_t
rs_answer_budget_reserve(struct rs_answer_budget *b, uint64_t sending, unsigned kind)
{
    uint64_t want = kind < RS_ANSWER_BUDGET_KINDS && b->estimate[kind] ? b->estimate[kind]
                                                                       : RS_ANSWER_BUDGET_FIRST_GUESS;

    if (!rs_answer_budget_admits(b, sending, want))
        return 0;
    b->building += want;
    return want;
}

void
rs_answer_budget_built(struct rs_answer_budget *b, unsigned kind, uint64_t reserved, uint64_t len)
{
    b->building -= reserved <= b->building ? reserved : b->building;
    if (kind < RS_ANSWER_BUDGET_KINDS && len > 0) {
        uint64_t e = 2 * len;
        b->estimate[kind] = e > RS_ANSWER_BUDGET_FIRST_GUESS ? e : RS_ANSWER_BUDGET_FIRST_GUESS;
    }
}

uint64_t
rs_answer_budget_in_flight(const struct rs_answer_budget *b, uint64_t sending)
{
    return b->building + sending;
}
