/* Unit tests of common/time_arg: durations, "ago", ISO 8601 with and without zones, raw ns, and
 * refusals. Expected instants computed by hand from the calendar (2026-11-24 is day 20,781). */
#include "common/error.h"
#include "common/time_arg.h"
#include "tests/t.h"

#include <string.h>

#define S 1000000000LL
#define DAY_2026_11_24 (20781LL * 86400 * S) /* 2026-11-24T00:00:00Z */

static int64_t
at(const char *text, int64_t now)
{
    char err[256] = "";
    int64_t v = -1;
    int rc = rs_time_arg_parse(text, now, &v, err, sizeof err);
    return rc == 0 ? v : -999;
}

static void
durations(void)
{
    char err[256];
    int64_t v = 0;

    T_OK(rs_time_arg_duration("300s", &v, err, sizeof err));
    T_EQ(v, 300 * S);
    T_OK(rs_time_arg_duration("1.5h", &v, err, sizeof err));
    T_EQ(v, 5400 * S);
    T_OK(rs_time_arg_duration("250ms", &v, err, sizeof err));
    T_EQ(v, 250000000);
    T_OK(rs_time_arg_duration("2d", &v, err, sizeof err));
    T_EQ(v, 172800 * S);
    v = 7;
    T_EQ(rs_time_arg_duration("10", &v, err, sizeof err), RS_E_CONFIG); /* no unit */
    T_EQ(rs_time_arg_duration("10 m", &v, err, sizeof err), RS_E_CONFIG);
    T_EQ(rs_time_arg_duration("-5s", &v, err, sizeof err), RS_E_CONFIG);
    T_EQ(rs_time_arg_duration("5y", &v, err, sizeof err), RS_E_CONFIG);
    T_EQ(rs_time_arg_duration("1e30d", &v, err, sizeof err), RS_E_CONFIG);
    T_EQ(v, 7); /* untouched on error */
    T_CHECK(strstr(err, "not a duration") != NULL);
}

static void
points(void)
{
    int64_t now = DAY_2026_11_24 + 9 * 3600 * S;

    T_EQ(at("10m", now), now - 600 * S);
    T_EQ(at("now", now), now);
    T_EQ(at("2026-11-24T08:00Z", now), DAY_2026_11_24 + 8 * 3600 * S);
    T_EQ(at("2026-11-24 08:00:30", now), DAY_2026_11_24 + (8 * 3600 + 30) * S);
    T_EQ(at("2026-11-24", now), DAY_2026_11_24);
    T_EQ(at("2026-11-24T08:00:00.5+01:00", now), DAY_2026_11_24 + 7 * 3600 * S + S / 2);
    T_EQ(at("2026-11-24T08:00-0130", now), DAY_2026_11_24 + (9 * 3600 + 1800) * S);
    T_EQ(at("2024-02-29T00:00Z", now), (19782LL * 86400) * S); /* a leap day */
    T_EQ(at("1763971200000000000", now), 1763971200000000000LL);
}

static void
refusals(void)
{
    char err[256] = "";
    int64_t v = 42;

    T_EQ(at("2026-13-01", 0), -999);
    T_EQ(at("2025-02-29", 0), -999);
    T_EQ(at("2026-11-24T25:00Z", 0), -999);
    T_EQ(at("2026-11-24T08", 0), -999);
    T_EQ(at("2026-11-24T08:00Zjunk", 0), -999);
    T_EQ(at("yesterday", 0), -999);
    T_EQ(at("", 0), -999);
    T_EQ(at("-5", 0), -999);
    T_EQ(rs_time_arg_parse("soon", 0, &v, err, sizeof err), RS_E_CONFIG);
    T_EQ(v, 42);
    T_CHECK(strstr(err, "'soon' is not a time") != NULL);
}

int
main(void)
{
    T_RUN(durations);
    T_RUN(points);
    T_RUN(refusals);
    return T_DONE("common/time_arg");
}
