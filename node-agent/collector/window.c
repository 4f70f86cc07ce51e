/* The window scheduler (see window.h). */
#include "node-agent/collector/window.h"

enum rs_window_action
rs_window_tick(struct rs_window_schedule *s, uint64_t realtime_ns, uint64_t mono_ns)
{
    uint64_t k = realtime_ns / s->period_ns;
    bool inside = realtime_ns - k * s->period_ns < s->window_ns;

    if (s->open) {
        /* a window that ends where the next begins (window = period: always on) goes on into it
         * — the kinds are not turned off and on again at the boundary */
        if (inside && k == s->index && s->window_ns == s->period_ns) {
            s->index = k + 1;
            s->opened_mono = mono_ns;
            return RS_WINDOW_STAY;
        }
        /* leave when the wall clock left this window, or when it has been open a window's length
         * (a step backwards must not stretch it) */
        if (!inside || k + 1 != s->index || mono_ns - s->opened_mono >= s->window_ns) {
            s->open = false;
            return RS_WINDOW_CLOSE;
        }
        return RS_WINDOW_STAY;
    }
    if (!inside || k + 1 == s->index)
        return RS_WINDOW_STAY; /* between windows, or in the one just traced */
    s->open = true;
    s->index = k + 1;
    s->opened_mono = mono_ns;
    return RS_WINDOW_OPEN;
}

uint64_t
rs_window_next_start(const struct rs_window_schedule *s, uint64_t realtime_ns)
{
    return (realtime_ns / s->period_ns + 1) * s->period_ns;
}

uint64_t
rs_window_next_change(const struct rs_window_schedule *s, uint64_t realtime_ns)
{
    uint64_t start = realtime_ns / s->period_ns * s->period_ns;

    return realtime_ns < start + s->window_ns ? start + s->window_ns : start + s->period_ns;
}
