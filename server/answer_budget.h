/* The memory budget of REST answers in flight (issue 23): the bytes of answers being built on the
 * query threads (an estimate reserved when a scan starts) and of answers being written to clients
 * (rs_http_response_bytes) together stay within a bound. Many clients asking for the largest
 * answers at once — each copy of a kept or shared answer is written to its own connection, and a
 * client that reads slowly holds its copy — would otherwise take memory without end; past the
 * bound a new answer is refused (503 with Retry-After, routes.c) instead. An answer is always
 * admitted when nothing else is in flight, so one larger than the bound is still served. Loop
 * thread only; not thread-safe. */
#ifndef RS_SERVER_ANSWER_BUDGET_H
#define RS_SERVER_ANSWER_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a scan of a route whose answers were never seen is expected to take while it builds. */
#define RS_ANSWER_BUDGET_FIRST_GUESS (1u << 20)
/* Routes the budget keeps an estimate for (routes.c's query kinds). */
#define RS_ANSWER_BUDGET_KINDS 32

struct rs_answer_budget {
    uint64_t limit;    /* bytes; 0 = no bound */
    uint64_t building; /* reserved by scans running */
    /* per route: twice its last answer's length (the tree and its text coexist while an answer is
     * encoded), at least the first guess; 0 = none seen yet */
    uint64_t estimate[RS_ANSWER_BUDGET_KINDS];
    uint64_t refused; /* answers refused so far */
};

/* Whether an answer of `bytes` more fits with `sending` bytes being written now: true when the
 * total stays within the limit, or when nothing is in flight. Counts a refusal. */
bool rs_answer_budget_admits(struct rs_answer_budget *b, uint64_t sending, uint64_t bytes);

/* Reserves what a scan of route `kind` is expected to take (rs_answer_budget_admits applies):
 * the bytes reserved (> 0), to give back to rs_answer_budget_built, or 0 when refused. */
uint64_t rs_answer_budget_reserve(struct rs_answer_budget *b, uint64_t sending, unsigned kind);

/* The scan that reserved `reserved` ended with an answer of `len` bytes (0: none): the
 * reservation is given back (the answer's bytes are then counted as sent) and the route's
 * estimate follows the answer. */
void rs_answer_budget_built(struct rs_answer_budget *b, unsigned kind, uint64_t reserved,
                            uint64_t len);

/* Bytes in flight: reserved by scans plus `sending`. */
uint64_t rs_answer_budget_in_flight(const struct rs_answer_budget *b, uint64_t sending);

#endif
