/* Unit tests of the kernel-tracing window scheduler (node-agent/collector/window.h): windows on
 * wall-clock multiples of the period for ranks started at any time and ticked at any phase, late
 * ticks, clock steps forwards and backwards, a clock that stops while a window is open. */
#include "node-agent/collector/window.h"
#include "tests/t.h"

#define MS 1000000ull
#define SEC 1000000000ull
#define T0 (1800000000ull * SEC) /* a multiple of 30 s */

/* Ticks every `step` from `from` to `to` (both clocks advancing together, mono = real - offset)
 * and records the realtime of each open and close. */
struct trace {
    uint64_t opens[64], closes[64];
    int n_open, n_close;
};

static void
run(struct rs_window_schedule *s, uint64_t from, uint64_t to, uint64_t step, uint64_t mono_off,
    struct trace *t)
{
    for (uint64_t now = from; now < to; now += step) {
        enum rs_window_action a = rs_window_tick(s, now, now - mono_off);
        if (a == RS_WINDOW_OPEN && t->n_open < 64)
            t->opens[t->n_open++] = now;
        if (a == RS_WINDOW_CLOSE && t->n_close < 64)
            t->closes[t->n_close++] = now;
    }
}

/* Two ranks started 7.3 s apart, ticking every 250 ms at different phases: the same windows,
 * each opened within a tick of its start and closed within a tick of its end. */
static void
aligned_across_ranks(void)
{
    struct rs_window_schedule a = {.window_ns = 2 * SEC, .period_ns = 30 * SEC},
                              b = {.window_ns = 2 * SEC, .period_ns = 30 * SEC};
    struct trace ta = {0}, tb = {0};

    run(&a, T0 + 2 * SEC + 13 * MS, T0 + 120 * SEC, 250 * MS, 5 * SEC, &ta);
    run(&b, T0 + 8 * SEC + 301 * MS, T0 + 120 * SEC, 250 * MS, 77 * SEC, &tb);
    T_EQ(ta.n_open, 3); /* 30, 60, 90 s */
    T_EQ(tb.n_open, 3);
    for (int i = 0; i < 3; i++) {
        uint64_t start = T0 + (uint64_t)(i + 1) * 30 * SEC;
        T_CHECK(ta.opens[i] >= start && ta.opens[i] < start + 250 * MS);
        T_CHECK(tb.opens[i] >= start && tb.opens[i] < start + 250 * MS);
        T_CHECK(ta.closes[i] >= start + 2 * SEC && ta.closes[i] < start + 2 * SEC + 250 * MS);
        T_CHECK(tb.closes[i] >= start + 2 * SEC && tb.closes[i] < start + 2 * SEC + 250 * MS);
    }
    T_EQ(ta.n_close, 3);
}

/* Started inside a window: traces the rest of it, not a full window of its own. */
static void
started_inside(void)
{
    struct rs_window_schedule s = {.window_ns = 2 * SEC, .period_ns = 30 * SEC};
    T_EQ(rs_window_tick(&s, T0 + 1500 * MS, 0), RS_WINDOW_OPEN);
    T_EQ(rs_window_tick(&s, T0 + 1900 * MS, 400 * MS), RS_WINDOW_STAY);
    T_EQ(rs_window_tick(&s, T0 + 2 * SEC, 500 * MS), RS_WINDOW_CLOSE);
    T_EQ(rs_window_next_start(&s, T0 + 2 * SEC), T0 + 30 * SEC);
    T_EQ(rs_window_next_start(&s, T0), T0 + 30 * SEC);
    /* the flush thread's wake-ups: a window's end while inside it, else the next start */
    T_EQ(rs_window_next_change(&s, T0), T0 + 2 * SEC);
    T_EQ(rs_window_next_change(&s, T0 + 1500 * MS), T0 + 2 * SEC);
    T_EQ(rs_window_next_change(&s, T0 + 2 * SEC), T0 + 30 * SEC);
    T_EQ(rs_window_next_change(&s, T0 + 29 * SEC), T0 + 30 * SEC);
}

/* The wall clock steps forward past a whole window while one is open: it closes, the skipped one
 * is not traced, the next comes on time. */
static void
step_forward(void)
{
    struct rs_window_schedule s = {.window_ns = 2 * SEC, .period_ns = 30 * SEC};
    T_EQ(rs_window_tick(&s, T0 + 1 * SEC, 1 * SEC), RS_WINDOW_OPEN);
    T_EQ(rs_window_tick(&s, T0 + 65 * SEC, 1250 * MS), RS_WINDOW_CLOSE);
    T_EQ(rs_window_tick(&s, T0 + 66 * SEC, 2250 * MS), RS_WINDOW_STAY);
    T_EQ(rs_window_tick(&s, T0 + 90 * SEC, 26 * SEC), RS_WINDOW_OPEN);
}

/* Stepped back into the window it just traced: not traced twice; stepped back by an hour: the
 * windows come again at their times. */
static void
step_backward(void)
{
    struct rs_window_schedule s = {.window_ns = 2 * SEC, .period_ns = 30 * SEC};
    T_EQ(rs_window_tick(&s, T0 + 500 * MS, 10 * SEC), RS_WINDOW_OPEN);
    T_EQ(rs_window_tick(&s, T0 + 2100 * MS, 11600 * MS), RS_WINDOW_CLOSE);
    T_EQ(rs_window_tick(&s, T0 + 1 * SEC, 11850 * MS), RS_WINDOW_STAY); /* back into it */
    T_EQ(rs_window_tick(&s, T0 + 1900 * MS, 12750 * MS), RS_WINDOW_STAY);
    T_EQ(rs_window_tick(&s, T0 - 3600 * SEC + 100 * MS, 13 * SEC), RS_WINDOW_OPEN);
    T_EQ(rs_window_tick(&s, T0 - 3600 * SEC + 2100 * MS, 15 * SEC), RS_WINDOW_CLOSE);
    /* back to the window before the open one, while open: closes, then opens the earlier one */
    T_EQ(rs_window_tick(&s, T0 + 30 * SEC, 40 * SEC), RS_WINDOW_OPEN);
    T_EQ(rs_window_tick(&s, T0 + 100 * MS, 40250 * MS), RS_WINDOW_CLOSE);
    T_EQ(rs_window_tick(&s, T0 + 350 * MS, 40500 * MS), RS_WINDOW_OPEN);
}

/* A wall clock that stops (or crawls) inside a window: closed after a window's length of
 * monotonic time; not reopened while the wall clock stays in it. */
static void
clock_stops(void)
{
    struct rs_window_schedule s = {.window_ns = 2 * SEC, .period_ns = 30 * SEC};
    T_EQ(rs_window_tick(&s, T0 + 1 * SEC, 100 * SEC), RS_WINDOW_OPEN);
    T_EQ(rs_window_tick(&s, T0 + 1 * SEC, 101 * SEC), RS_WINDOW_STAY);
    T_EQ(rs_window_tick(&s, T0 + 1 * SEC, 102 * SEC), RS_WINDOW_CLOSE);
    T_EQ(rs_window_tick(&s, T0 + 1 * SEC, 103 * SEC), RS_WINDOW_STAY);
}

/* window == period: always open once entered, never closed by the wall clock's own progress —
 * not even for a tick at each boundary (it used to close there and open at the next tick). */
static void
window_is_period(void)
{
    struct rs_window_schedule s = {.window_ns = 30 * SEC, .period_ns = 30 * SEC};
    struct trace t = {0};
    run(&s, T0 + 1 * SEC, T0 + 95 * SEC, 250 * MS, 0, &t);
    T_EQ(t.n_open, 1);
    T_EQ(t.n_close, 0);
}

int
main(void)
{
    T_RUN(aligned_across_ranks);
    T_RUN(started_inside);
    T_RUN(step_forward);
    T_RUN(step_backward);
    T_RUN(clock_stops);
    T_RUN(window_is_period);
    return T_DONE("collector/window");
}
