/* Clock helpers (see clock.h). */
#include "common/clock.h"

#include <errno.h>
#include <time.h>

static uint64_t
read_clock(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t
rs_clock_realtime_ns(void)
{
    return read_clock(CLOCK_REALTIME);
}

uint64_t
rs_clock_mono_ns(void)
{
    return read_clock(CLOCK_MONOTONIC);
}

void
rs_clock_sleep_ns(uint64_t ns)
{
    struct timespec req = {.tv_sec = (time_t)(ns / 1000000000ull),
                           .tv_nsec = (long)(ns % 1000000000ull)};

    while (nanosleep(&req, &req) != 0 && errno == EINTR)
        ;
}
