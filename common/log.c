/* Line-oriented stderr logger with stable message ids and per-call-site rate limiting. */
#include "common/log.h"

#include "common/clock.h"
#include "common/error.h"
#include "common/utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int rs_log_threshold = RS_LOG_INFO;

static const char *const level_names[] = {"error", "warn", "info", "debug"};

int
rs_log_set_level(const char *name)
{
    for (int i = 0; i < (int)(sizeof level_names / sizeof level_names[0]); i++) {
        if (strcmp(name, level_names[i]) == 0) {
            rs_log_threshold = i;
            return 0;
        }
    }
    return RS_E_CONFIG;
}

void
rs__log_write(int level, const char *id, const char *fmt, ...)
{
    char when[32], msg[1024], shown[2048];
    struct timespec ts;
    struct tm tm;
    va_list ap;

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* Names in messages come from the wire (hosts, kernels, GPUs): a newline in one must not start
     * a forged line, an escape sequence must not reach the operator's terminal. */
    rs_utf8_escape(msg, strlen(msg), shown, sizeof shown);
    /* One fprintf per line so concurrent threads do not interleave inside a line. */
    fprintf(stderr, "%s.%03ldZ %-5s %s %s\n", when, ts.tv_nsec / 1000000, level_names[level], id,
            shown);
}

int
rs__log_allow(uint64_t *last_ns, unsigned interval_s)
{
    uint64_t now = rs_clock_mono_ns();

    if (*last_ns != 0 && now - *last_ns < (uint64_t)interval_s * 1000000000ull)
        return 0;
    *last_ns = now;
    return 1;
}

uint64_t
rs__log_take(uint64_t *counter)
{
    uint64_t n = *counter;

    *counter = 0;
    return n;
}
