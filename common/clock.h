/* Clocks. Wall time (CLOCK_REALTIME, the clock CUPTI uses by default) for record timestamps,
 * monotonic time for timeouts and rates. All values are nanoseconds. */
#ifndef RS_COMMON_CLOCK_H
#define RS_COMMON_CLOCK_H

#include <stdint.h>

uint64_t rs_clock_realtime_ns(void);
uint64_t rs_clock_mono_ns(void);

/* Sleeps for `ns` nanoseconds, resuming after signals. */
void rs_clock_sleep_ns(uint64_t ns);

#endif
