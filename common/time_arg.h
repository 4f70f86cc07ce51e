/* Points in time as people and scripts write them on a command line (--since, --until, --last).
 * Pure functions: the caller passes "now". */
#ifndef RS_COMMON_TIME_ARG_H
#define RS_COMMON_TIME_ARG_H

#include <stddef.h>
#include <stdint.h>

/* Parses a duration: a number and a unit, "300s", "10m", "1.5h", "2d", "250ms" (units ns, us,
 * ms, s, m, h, d). Returns 0 with *ns set, or RS_E_CONFIG with a message in err. */
int rs_time_arg_duration(const char *text, int64_t *ns, char *err, size_t err_len);

/* Parses a point in time and writes ns since the epoch to *ns:
 *   - a duration, meaning that long before now_ns ("10m" = ten minutes ago); "now";
 *   - an ISO 8601 date and time in UTC unless it names a zone: "2026-11-24T08:00Z",
 *     "2026-11-24 08:00:30", "2026-11-24T08:00:00.5+01:00", or a date alone "2026-11-24";
 *   - an integer: ns since the epoch, as the API takes them.
 * Returns 0, or RS_E_CONFIG with a message for people in err (nothing written to *ns). */
int rs_time_arg_parse(const char *text, int64_t now_ns, int64_t *ns, char *err, size_t err_len);

#endif
