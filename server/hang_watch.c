/* Hang verdicts on a timer, logged and counted (see hang_watch.h). */
#include "server/hang_watch.h"
#include "server/auto_capture.h"

#include "common/array.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "common/utf8.h"
#include "query/hangs.h"
#include "server/periodic.h"
#include "server/server_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct active_hang {
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    uint64_t comm, seq, since_ns;
    char op[32];
    bool seen; /* found again by the newest check */
};

struct rs_hang_watch {
    struct rs_periodic periodic; /* its timer's data is the watch */
    struct rs_server *srv;
    unsigned active_s;
    struct active_hang *v;
    size_t n, cap;
    struct rs_hang_watch_stats stats;
};

/* "0 (host node1, GPU-...), 3 (...)" for the log, hosts and GPU names escaped; cut at `len`. */
static void
ranks_text(const struct rs_hang_rank *r, size_t n, char *out, size_t len)
{
    size_t used = 0;
    char host[96], gpu[96];

    out[0] = '\0';
    for (size_t i = 0; i < n && used + 1 < len; i++) {
        rs_utf8_escape(r[i].host, strlen(r[i].host), host, sizeof host);
        rs_utf8_escape(r[i].gpu_uuid, strlen(r[i].gpu_uuid), gpu, sizeof gpu);
        int k =
            snprintf(out + used, len - used, "%s%u (%s %s)", i ? ", " : "", r[i].rank, host, gpu);
        if (k < 0)
            break;
        used += (size_t)k;
    }
    if (used >= len && len > 4)
        memcpy(out + len - 4, "...", 4);
}

static void
raised(rs_hang_watch *w, const char *job, const struct rs_hang *h)
{
    char waiting[512], absent[512];

    ranks_text(h->waiting, h->n_waiting, waiting, sizeof waiting);
    ranks_text(h->absent, h->n_absent, absent, sizeof absent);
    w->stats.raised++;
    rs_log(RS_LOG_WARN, "RS-HANG-RAISED",
           "job %s: %s seq %" PRIu64 " on communicator 0x%016" PRIx64 " (%u ranks) in flight for "
           "%.1f s; waiting: %s; never arrived: %s%s%u unknown",
           job, h->op, h->seq, h->comm, h->comm_size,
           (double)(rs_clock_realtime_ns() - h->since_ns) / 1e9, waiting, h->n_absent ? absent : "",
           h->n_absent ? "; " : "", h->absent_unknown);
}

static void
check_job(rs_hang_watch *w, rs_store_read *r, const char *job, uint64_t now)
{
    struct rs_rank_info *ranks = NULL;
    struct rs_hang_report rep;
    size_t n = 0;
    int rc;

    if ((rc = rs_store_ranks_get(r, job, &ranks, &n)) != 0 ||
        (rc = rs_hangs_find(ranks, n, now, RS_HANG_FRESH_NS, &rep)) != 0) {
        free(ranks);
        if (rc != RS_E_NOT_FOUND)
            w->stats.errors++;
        return;
    }
    for (size_t i = 0; i < rep.n; i++) {
        const struct rs_hang *h = &rep.hangs[i];
        bool known = false;
        for (size_t k = 0; k < w->n && !known; k++) {
            struct active_hang *a = &w->v[k];
            if (a->comm == h->comm && a->seq == h->seq && strcmp(a->op, h->op) == 0 &&
                strcmp(a->job, job) == 0)
                known = a->seen = true;
        }
        if (known || RS_ARRAY_RESERVE(w->v, w->cap, w->n, 1) != 0)
            continue;
        struct active_hang *a = &w->v[w->n++];
        snprintf(a->job, sizeof a->job, "%s", job);
        snprintf(a->op, sizeof a->op, "%s", h->op);
        a->comm = h->comm;
        a->seq = h->seq;
        a->since_ns = h->since_ns;
        a->seen = true;
        raised(w, job, h);
        rs__server_auto_capture_hang(w->srv, job, h, rs_clock_realtime_ns()); /* auto_capture.h */
    }
    rs_hang_report_fini(&rep);
    free(ranks);
}

struct scan {
    rs_hang_watch *w;
    rs_store_read *r;
    uint64_t now, active_after;
};

static int
on_job(void *arg, const struct rs_job_info *job)
{
    struct scan *s = arg;

    if (job->received_ns >= s->active_after)
        check_job(s->w, s->r, job->name, s->now);
    return 0;
}

static void
on_tick(uv_timer_t *t)
{
    rs_hang_watch *w = t->data;
    uint64_t now = rs_clock_realtime_ns();
    struct scan s = {w, NULL, now, now - (uint64_t)w->active_s * 1000000000ull};

    for (size_t i = 0; i < w->n; i++)
        w->v[i].seen = false;
    if (rs_store_read_begin(w->srv->store, &s.r) != 0) {
        w->stats.errors++;
        return; /* the verdicts stay until a check can read */
    }
    rs_store_jobs_scan(s.r, on_job, &s);
    rs_store_read_end(s.r);
    for (size_t i = 0; i < w->n;) {
        struct active_hang *a = &w->v[i];
        if (a->seen) {
            i++;
            continue;
        }
        w->stats.cleared++;
        rs_log(RS_LOG_INFO, "RS-HANG-CLEARED",
               "job %s: %s seq %" PRIu64 " on communicator 0x%016" PRIx64
               " no longer in flight (after %.1f s)",
               a->job, a->op, a->seq, a->comm, (double)(now - a->since_ns) / 1e9);
        w->v[i] = w->v[--w->n];
    }
    w->stats.active = w->n;
}

/* The checks run on the loop thread: nothing is ever in flight. */
static bool
never_busy(void *owner)
{
    (void)owner;
    return false;
}

static void
free_watch(void *owner)
{
    rs_hang_watch *w = owner;

    free(w->v);
    free(w);
}

int
rs_hang_watch_start(struct rs_server *srv, unsigned period_ms, unsigned active_s,
                    rs_hang_watch **out)
{
    rs_hang_watch *w = calloc(1, sizeof *w);

    if (!w)
        return -ENOMEM;
    w->srv = srv;
    w->active_s = active_s;
    rs__periodic_init(&w->periodic, &srv->loop, w, never_busy, free_watch);
    if (period_ms > 0)
        rs__periodic_start(&w->periodic, on_tick, period_ms, period_ms);
    *out = w;
    return 0;
}

void
rs_hang_watch_close(rs_hang_watch *w)
{
    if (w)
        rs__periodic_close(&w->periodic);
}

void
rs_hang_watch_get_stats(const rs_hang_watch *w, struct rs_hang_watch_stats *out)
{
    *out = w ? w->stats : (struct rs_hang_watch_stats){0};
}
