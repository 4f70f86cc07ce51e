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
    bool seen;   /* found again by the newest check */
    uint64_t id; /* its history entry's */
};

/* A hang the watch raised, kept after it cleared (the newest RS_HANG_HISTORY of all jobs). */
#define HISTORY_RANKS 16
struct past_hang {
    uint64_t id; /* 1, 2, ... in the order raised */
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    char op[32];
    uint64_t comm, seq, since_ns, raised_ns, cleared_ns; /* cleared_ns 0: still open */
    uint32_t comm_size, n_waiting, n_absent;             /* n_absent: known ranks that never
                                                            arrived; the first HISTORY_RANKS: */
    uint32_t absent[HISTORY_RANKS];
};

/* Raises and clears for the store's lasting copy (storage/store.h rs_store_hang_put): gathered
 * during a check, written by one writer task after it. */
struct hang_put {
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    struct rs_store_hang h;
};
struct hang_puts {
    struct hang_put *v;
    size_t n, cap;
};

struct rs_hang_watch {
    struct rs_periodic periodic; /* its timer's data is the watch */
    struct hang_puts puts;       /* this check's, not yet handed to the writer */
    struct rs_server *srv;
    unsigned active_s;
    struct active_hang *v;
    size_t n, cap;
    struct rs_hang_watch_stats stats;
    struct past_hang history[RS_HANG_HISTORY]; /* a ring: entry id lives at id % size */
    uint64_t next_id;
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

/* Notes p (raised, or cleared) for the store; a note that finds no memory is dropped (the
 * history in memory still has it; logged at the submit). */
static void
note_put(rs_hang_watch *w, const struct past_hang *p)
{
    if (RS_ARRAY_RESERVE(w->puts.v, w->puts.cap, w->puts.n, 1) != 0) {
        w->stats.errors++;
        return;
    }
    struct hang_put *e = &w->puts.v[w->puts.n++];
    snprintf(e->job, sizeof e->job, "%s", p->job);
    e->h = (struct rs_store_hang){.comm = p->comm,
                                  .seq = p->seq,
                                  .since_ns = p->since_ns,
                                  .raised_ns = p->raised_ns,
                                  .cleared_ns = p->cleared_ns,
                                  .comm_size = p->comm_size,
                                  .n_waiting = p->n_waiting,
                                  .n_absent = p->n_absent};
    snprintf(e->h.op, sizeof e->h.op, "%s", p->op);
    memcpy(e->h.absent, p->absent, sizeof e->h.absent);
}

static int
record_puts(rs_store_write *sw, void *arg, bool *done) /* writer thread */
{
    struct hang_puts *l = arg;

    for (size_t i = 0; i < l->n; i++) {
        int rc = rs_store_hang_put(sw, l->v[i].job, &l->v[i].h);
        if (rc != 0 && rc != RS_E_NOT_FOUND) /* (a job deleted meanwhile keeps no history) */
            return rc;
    }
    *done = true;
    return 0;
}

static void
recorded_puts(void *arg, int status) /* writer thread */
{
    struct hang_puts *l = arg;

    if (status != 0)
        rs_log_limited(60, RS_LOG_ERROR, "RS-HANG-HISTORY",
                       "storing %zu hang raises and clears failed: %s (a restart forgets them)",
                       l->n, rs_strerror(status));
    free(l->v);
    free(l);
}

/* Hands this check's notes to the writer (a check raises and clears a few at most). */
static void
submit_puts(rs_hang_watch *w)
{
    struct hang_puts *l;
    int rc = -ENOMEM;

    if (w->puts.n == 0)
        return;
    if ((l = malloc(sizeof *l))) {
        *l = w->puts;
        w->puts = (struct hang_puts){0};
        if ((rc = rs_writer_submit_task(w->srv->writer, record_puts, recorded_puts, l)) == 0)
            return;
        w->puts = *l;
        free(l);
    }
    rs_log_limited(60, RS_LOG_ERROR, "RS-HANG-HISTORY",
                   "storing %zu hang raises and clears failed: %s (a restart forgets them)",
                   w->puts.n, rs_strerror(rc));
    w->puts.n = 0;
}

static struct past_hang *
history_entry(rs_hang_watch *w, uint64_t id)
{
    struct past_hang *p = &w->history[id % RS_HANG_HISTORY];
    return p->id == id ? p : NULL;
}

static uint64_t
remember(rs_hang_watch *w, const char *job, const struct rs_hang *h, uint64_t now)
{
    uint64_t id = ++w->next_id;
    struct past_hang *p = &w->history[id % RS_HANG_HISTORY];

    *p = (struct past_hang){.id = id,
                            .comm = h->comm,
                            .seq = h->seq,
                            .since_ns = h->since_ns,
                            .raised_ns = now,
                            .comm_size = h->comm_size,
                            .n_waiting = (uint32_t)h->n_waiting,
                            .n_absent = (uint32_t)h->n_absent};
    snprintf(p->job, sizeof p->job, "%s", job);
    snprintf(p->op, sizeof p->op, "%s", h->op);
    for (size_t i = 0; i < h->n_absent && i < HISTORY_RANKS; i++)
        p->absent[i] = h->absent[i].rank;
    note_put(w, p);
    return id;
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
        a->id = remember(w, job, h, now);
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
        struct past_hang *p = history_entry(w, a->id);
        if (p) {
            p->cleared_ns = now;
            note_put(w, p);
        }
        rs_log(RS_LOG_INFO, "RS-HANG-CLEARED",
               "job %s: %s seq %" PRIu64 " on communicator 0x%016" PRIx64
               " no longer in flight (after %.1f s)",
               a->job, a->op, a->seq, a->comm, (double)(now - a->since_ns) / 1e9);
        w->v[i] = w->v[--w->n];
    }
    w->stats.active = w->n;
    submit_puts(w);
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
    free(w->puts.v);
    free(w);
}

_Static_assert(HISTORY_RANKS == RS_STORE_HANG_RANKS, "the stored hang keeps the ranks kept here");

/* The stored history, read at the start: every job's hangs, the newest RS_HANG_HISTORY of all
 * kept. */
struct loaded {
    struct hang_put *v;
    size_t n, cap;
    const char *job; /* the job being scanned */
    rs_store_read *r;
};

static int
on_stored_hang(void *arg, const struct rs_store_hang *h)
{
    struct loaded *l = arg;

    if (RS_ARRAY_RESERVE(l->v, l->cap, l->n, 1) != 0)
        return -ENOMEM;
    struct hang_put *e = &l->v[l->n++];
    snprintf(e->job, sizeof e->job, "%s", l->job);
    e->h = *h;
    return 0;
}

static int
on_stored_job(void *arg, const struct rs_job_info *job)
{
    struct loaded *l = arg;

    l->job = job->name;
    return rs_store_hangs_scan(l->r, job->name, on_stored_hang, l);
}

static int
by_raised(const void *a, const void *b)
{
    const struct hang_put *x = a, *y = b;
    return (x->h.raised_ns > y->h.raised_ns) - (x->h.raised_ns < y->h.raised_ns);
}

/* Fills the history from the store; hangs still open when the server stopped are active again,
 * so that the first check continues them (found again: no second raise) or clears them. */
static int
load_history(rs_hang_watch *w)
{
    struct loaded l = {0};
    int rc;

    if ((rc = rs_store_read_begin(w->srv->store, &l.r)) != 0)
        return rc;
    rc = rs_store_jobs_scan(l.r, on_stored_job, &l);
    rs_store_read_end(l.r);
    if (rc == 0 && l.n > 1)
        qsort(l.v, l.n, sizeof *l.v, by_raised);
    for (size_t i = l.n > RS_HANG_HISTORY ? l.n - RS_HANG_HISTORY : 0; rc == 0 && i < l.n; i++) {
        const struct hang_put *e = &l.v[i];
        uint64_t id = ++w->next_id;
        struct past_hang *p = &w->history[id % RS_HANG_HISTORY];
        *p = (struct past_hang){.id = id,
                                .comm = e->h.comm,
                                .seq = e->h.seq,
                                .since_ns = e->h.since_ns,
                                .raised_ns = e->h.raised_ns,
                                .cleared_ns = e->h.cleared_ns,
                                .comm_size = e->h.comm_size,
                                .n_waiting = e->h.n_waiting,
                                .n_absent = e->h.n_absent};
        snprintf(p->job, sizeof p->job, "%s", e->job);
        snprintf(p->op, sizeof p->op, "%s", e->h.op);
        memcpy(p->absent, e->h.absent, sizeof p->absent);
        if (p->cleared_ns || RS_ARRAY_RESERVE(w->v, w->cap, w->n, 1) != 0)
            continue;
        struct active_hang *a = &w->v[w->n++];
        *a = (struct active_hang){.comm = p->comm, .seq = p->seq, .since_ns = p->since_ns, .id = id};
        snprintf(a->job, sizeof a->job, "%s", p->job);
        snprintf(a->op, sizeof a->op, "%s", p->op);
    }
    w->stats.active = w->n;
    free(l.v);
    return rc;
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
    int rc = load_history(w); /* the history survives a restart (storage/store.h) */
    if (rc != 0)
        rs_log(RS_LOG_WARN, "RS-HANG-HISTORY", "cannot read the stored hang history: %s",
               rs_strerror(rc));
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

json_t *
rs_hang_watch_history_json(const rs_hang_watch *w, const char *job)
{
    json_t *list = json_array();
    char comm[24];

    for (uint64_t id = w ? w->next_id : 0; list && id > 0 && w->next_id - id < RS_HANG_HISTORY;
         id--) {
        const struct past_hang *p = &w->history[id % RS_HANG_HISTORY];
        if (p->id != id || strcmp(p->job, job) != 0)
            continue;
        json_t *absent = json_array();
        for (uint32_t i = 0; absent && i < p->n_absent && i < HISTORY_RANKS; i++)
            json_array_append_new(absent, json_integer(p->absent[i]));
        snprintf(comm, sizeof comm, "0x%016" PRIx64, p->comm);
        json_t *e =
            absent ? json_pack(
                         "{s:s, s:s, s:I, s:I, s:I, s:o, s:I, s:I, s:I, s:o}", "comm", comm, "op",
                         p->op, "seq", (json_int_t)p->seq, "since_ns", (json_int_t)p->since_ns,
                         "raised_ns", (json_int_t)p->raised_ns, "cleared_ns",
                         p->cleared_ns ? json_integer((json_int_t)p->cleared_ns) : json_null(),
                         "comm_size", (json_int_t)p->comm_size, "waiting", (json_int_t)p->n_waiting,
                         "never_arrived_count", (json_int_t)p->n_absent, "never_arrived", absent)
                   : NULL;
        if (!e || json_array_append_new(list, e) != 0) {
            json_decref(list);
            return NULL;
        }
    }
    return list;
}

void
rs_hang_watch_get_stats(const rs_hang_watch *w, struct rs_hang_watch_stats *out)
{
    *out = w ? w->stats : (struct rs_hang_watch_stats){0};
}
