/* Points in time from the command line (see time_arg.h). */
#include "common/time_arg.h"

#include "common/error.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NS_PER_S 1000000000.0

static const struct {
    const char *name;
    double ns;
} units[] = {
    {"ns", 1},
    {"us", 1e3},
    {"ms", 1e6},
    {"s", NS_PER_S},
    {"m", 60 * NS_PER_S},
    {"h", 3600 * NS_PER_S},
    {"d", 86400 * NS_PER_S},
};

int
rs_time_arg_duration(const char *text, int64_t *ns, char *err, size_t err_len)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(text, &end);
    if (end != text && isdigit((unsigned char)text[0]) && errno == 0 && isfinite(v))
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (strcmp(end, units[i].name) == 0 && v * units[i].ns < 9.2e18) {
                *ns = (int64_t)llround(v * units[i].ns);
                return 0;
            }
    snprintf(err, err_len, "'%s' is not a duration (a number and a unit: 300s, 10m, 1.5h, 2d)",
             text);
    return RS_E_CONFIG;
}

/* Reads exactly `digits` digits. */
static int
read_int(const char **p, int digits, int *out)
{
    int v = 0;

    for (int i = 0; i < digits; i++) {
        if (!isdigit((unsigned char)(*p)[i]))
            return -1;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += digits;
    *out = v;
    return 0;
}

static bool
valid_date(int y, int mo, int d, int h, int mi, int s)
{
    static const int days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

    return y >= 1970 && mo >= 1 && mo <= 12 && d >= 1 && d <= days[mo - 1] - (mo == 2 && !leap) &&
           h <= 23 && mi <= 59 && s <= 60;
}

/* ISO 8601 as in time_arg.h. Returns 0 or -1. */
static int
parse_iso(const char *p, int64_t *ns)
{
    struct tm tm = {0};
    int y, mo, d, h = 0, mi = 0, s = 0, zh = 0, zm = 0, zone = 0;
    double frac = 0;

    if (read_int(&p, 4, &y) || *p++ != '-' || read_int(&p, 2, &mo) || *p++ != '-' ||
        read_int(&p, 2, &d))
        return -1;
    if (*p == 'T' || *p == 't' || *p == ' ') {
        p++;
        if (read_int(&p, 2, &h) || *p++ != ':' || read_int(&p, 2, &mi))
            return -1;
        if (*p == ':') {
            p++;
            if (read_int(&p, 2, &s))
                return -1;
            if (*p == '.' || *p == ',') {
                char *end;
                char buf[32] = "0.";
                size_t n = strspn(p + 1, "0123456789");
                if (n == 0 || n > 9)
                    return -1;
                memcpy(buf + 2, p + 1, n);
                frac = strtod(buf, &end);
                p += 1 + n;
            }
        }
        if (*p == 'Z' || *p == 'z')
            p++;
        else if (*p == '+' || *p == '-') {
            zone = *p++ == '+' ? 1 : -1;
            if (read_int(&p, 2, &zh))
                return -1;
            if (*p == ':')
                p++;
            if (read_int(&p, 2, &zm) || zh > 23 || zm > 59)
                return -1;
        }
    }
    if (*p != '\0' || !valid_date(y, mo, d, h, mi, s))
        return -1;
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return -1;
    t -= zone * (zh * 3600 + zm * 60);
    *ns = (int64_t)t * 1000000000 + (int64_t)llround(frac * NS_PER_S);
    return 0;
}

int
rs_time_arg_parse(const char *text, int64_t now_ns, int64_t *ns, char *err, size_t err_len)
{
    int64_t v;
    char *end;

    if (strcmp(text, "now") == 0) {
        *ns = now_ns;
        return 0;
    }
    if (strlen(text) >= 10 && text[4] == '-' && parse_iso(text, &v) == 0) {
        *ns = v;
        return 0;
    }
    errno = 0;
    long long raw = strtoll(text, &end, 10);
    if (*text && *end == '\0' && errno == 0 && raw >= 0) {
        *ns = raw;
        return 0;
    }
    if (*text && isdigit((unsigned char)*text) && !strchr(text, '-') &&
        rs_time_arg_duration(text, &v, err, err_len) == 0) {
        *ns = now_ns - v;
        return 0;
    }
    snprintf(err, err_len,
             "'%s' is not a time: give a duration before now (10m, 2h, 300s), a UTC date and "
             "time (2026-11-24T08:00Z, 2026-11-24 08:00:30), or ns since the epoch",
             text);
    return RS_E_CONFIG;
}
