/* The in-flight condition's text (see in_flight.h). */
#include "proto/in_flight.h"

#include "common/error.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static bool
letters_only(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z')))
            return false;
    return true;
}

int
rs_in_flight_format(const struct rs_in_flight *f, char *out, size_t len)
{
    if (len)
        out[0] = '\0';
    if (!memchr(f->op, '\0', sizeof f->op) || !letters_only(f->op) || f->comm_rank >= f->comm_size)
        return RS_E_MALFORMED;
    int n = snprintf(out, len,
                     "in flight: comm=%016" PRIx64 " r=%" PRIu32 "/%" PRIu32 " op=%s seq=%" PRIx64
                     " t0_ms=%" PRIu64 " ms=%" PRIu64 " gpu=%d",
                     f->comm, f->comm_rank, f->comm_size, f->op, f->seq, f->since_ms, f->for_ms,
                     f->gpu_started ? 1 : 0);
    if (n < 0 || (size_t)n >= len || n > RS_IN_FLIGHT_MAX) {
        if (len)
            out[0] = '\0';
        return -ENOSPC;
    }
    return 0;
}

int
rs_in_flight_parse(const char *text, struct rs_in_flight *out)
{
    struct rs_in_flight f;
    int end = -1, gpu = -1;

    memset(&f, 0, sizeof f);
    /* %n after the last field, then nothing may follow; sscanf's %u would take "-1", so signs
     * are refused first; numbers too large for their field fail (ERANGE: sscanf saturates, so
     * the round trip through format is checked instead) */
    if (!text || strlen(text) > RS_IN_FLIGHT_MAX || strchr(text, '-') || strchr(text, '+') ||
        sscanf(text,
               "in flight: comm=%16" SCNx64 " r=%" SCNu32 "/%" SCNu32 " op=%31[A-Za-z]"
               " seq=%16" SCNx64 " t0_ms=%" SCNu64 " ms=%" SCNu64 " gpu=%d%n",
               &f.comm, &f.comm_rank, &f.comm_size, f.op, &f.seq, &f.since_ms, &f.for_ms, &gpu,
               &end) != 8 ||
        end < 0 || text[end] != '\0' || (gpu != 0 && gpu != 1) || f.comm_size == 0 ||
        f.comm_rank >= f.comm_size)
        return RS_E_MALFORMED;
    f.gpu_started = gpu == 1;
    char again[RS_IN_FLIGHT_MAX + 1];
    if (rs_in_flight_format(&f, again, sizeof again) != 0 || strcmp(again, text) != 0)
        return RS_E_MALFORMED; /* leading zeros, spaces, saturated numbers: not what a writer writes
                                */
    *out = f;
    return 0;
}
