/* Minimal unit-test harness: T_CHECK and T_EQ record failures with file:line and go on; T_OK
 * checks that a call returned 0 and otherwise stops the test (its `return`), saying the error;
 * T_RUN runs a test function; T_DONE prints "<suite>: N passed, N failed" and returns the exit
 * status — a check that failed outside any T_RUN (in main, between runs) counts as one failed
 * test. */
#ifndef RS_TESTS_T_H
#define RS_TESTS_T_H

#include "common/error.h"

#include <stdio.h>

static int t_passed, t_failed, t_current_failed;

#define T_CHECK(cond)                                                                              \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "  FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                      \
            t_current_failed = 1;                                                                  \
        }                                                                                          \
    } while (0)

#define T_EQ(a, b)                                                                                 \
    do {                                                                                           \
        long long t_a_ = (long long)(a), t_b_ = (long long)(b);                                    \
        if (t_a_ != t_b_) {                                                                        \
            fprintf(stderr, "  FAIL %s:%d: %s == %s (%lld != %lld)\n", __FILE__, __LINE__, #a, #b, \
                    t_a_, t_b_);                                                                   \
            t_current_failed = 1;                                                                  \
        }                                                                                          \
    } while (0)

/* For calls the rest of the test depends on: rc must be 0, else the test stops here (it returns
 * from the test function, so use it where returning leaks nothing that matters). */
#define T_OK(call)                                                                                 \
    do {                                                                                           \
        int t_rc_ = (call);                                                                        \
        if (t_rc_ != 0) {                                                                          \
            fprintf(stderr, "  FAIL %s:%d: %s: %s (%d)\n", __FILE__, __LINE__, #call,              \
                    rs_strerror(t_rc_), t_rc_);                                                    \
            t_current_failed = 1;                                                                  \
            return;                                                                                \
        }                                                                                          \
    } while (0)

/* Counts a check that failed outside any test (before a T_RUN, or before T_DONE). */
#define T_OUTSIDE_FAILED()                                                                         \
    (t_current_failed ? (t_failed++, t_current_failed = 0,                                         \
                         fprintf(stderr, "not ok (a check outside a test, above)\n"))              \
                      : 0)

#define T_RUN_CALL(label, call)                                                                    \
    do {                                                                                           \
        T_OUTSIDE_FAILED();                                                                        \
        call;                                                                                      \
        if (t_current_failed) {                                                                    \
            t_failed++;                                                                            \
            t_current_failed = 0;                                                                  \
            fprintf(stderr, "not ok %s\n", label);                                                 \
        } else                                                                                     \
            t_passed++;                                                                            \
    } while (0)
#define T_RUN(fn) T_RUN_CALL(#fn, fn())
#define T_RUN_ARG(fn, arg) T_RUN_CALL(#fn, fn(arg)) /* for a test that takes one argument */

#define T_DONE(suite)                                                                              \
    (T_OUTSIDE_FAILED(), printf("%s: %d passed, %d failed\n", (suite), t_passed, t_failed),        \
     t_failed ? 1 : 0)

#endif
