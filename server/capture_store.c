/* Captures kept across restarts (see capture_store.h). */
#include "server/capture_store.h"

#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "server/periodic.h"
#include "server/server_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rs_capture_store {
    struct rs_periodic periodic; /* first member: its timer's data is the owner */
    struct rs_server *srv;
};

/* One writer task: the changes taken, stored in one transaction. */
struct flush {
    rs_captures *cs;
    struct rs_captures_changes ch;
};

static void
to_stored(const struct rs_capture_info *c, struct rs_store_capture *out)
{
    *out = (struct rs_store_capture){c->id,           c->rank,         c->kinds,      c->seconds,
                                     c->state,        c->ran_kinds,    c->requested_ns,
                                     c->delivered_ns, c->started_ns,   c->ended_ns,   c->batches,
                                     c->kernels,      c->stalls,       "",            "",
                                     ""};
    snprintf(out->who, sizeof out->who, "%s", c->who);
    snprintf(out->reason, sizeof out->reason, "%s", c->reason);
    snprintf(out->message, sizeof out->message, "%s", c->message);
}

static int
write_changes(rs_store_write *w, void *arg, bool *done) /* writer thread */
{
    struct flush *f = arg;

    for (size_t i = 0; i < f->ch.n; i++) {
        const struct rs_captures_change *ch = &f->ch.v[i];
        struct rs_store_capture sc;
        int rc;
        if (ch->gone)
            rc = rs_store_capture_delete(w, ch->c.job, ch->c.id);
        else {
            to_stored(&ch->c, &sc);
            rc = rs_store_capture_put(w, ch->c.job, &sc);
        }
        if (rc != 0 && rc != RS_E_NOT_FOUND) /* (a job deleted meanwhile: nothing to keep) */
            return rc;
    }
    *done = true;
    return 0;
}

static void
written(void *arg, int status) /* writer thread */
{
    struct flush *f = arg;

    if (status != 0)
        rs_log_limited(60, RS_LOG_ERROR, "RS-CAPTURE-STORE",
                       "storing %zu capture changes failed: %s (tried again)", f->ch.n,
                       rs_strerror(status));
    rs_captures_changes_done(f->cs, &f->ch, status == 0);
    free(f);
}

/* Takes the changes and queues them to the writer. */
static void
flush_now(struct rs_server *srv)
{
    struct flush *f = calloc(1, sizeof *f);

    if (!f)
        return;
    f->cs = srv->captures;
    if (rs_captures_changes_take(srv->captures, &f->ch) != 0 || f->ch.n == 0) {
        free(f); /* nothing changed, or the last changes are still with the writer */
        return;
    }
    if (rs_writer_submit_task(srv->writer, write_changes, written, f) != 0) {
        rs_captures_changes_done(srv->captures, &f->ch, false);
        free(f);
    }
}

static void
on_tick(uv_timer_t *t)
{
    rs_capture_store *s = t->data;

    rs_captures_expire(s->srv->captures, rs_clock_realtime_ns()); /* expiries are changes too */
    flush_now(s->srv);
}

/* The writer tasks own what they hold: nothing of the owner is ever in flight. */
static bool
never_busy(void *owner)
{
    (void)owner;
    return false;
}

static void
free_store(void *owner)
{
    free(owner);
}

struct load {
    rs_captures *cs;
    uint64_t now;
    size_t n, refused;
};

static int
load_one(void *arg, const char *job, const struct rs_store_capture *sc)
{
    struct load *l = arg;
    struct rs_capture_info c = {.id = sc->id,
                                .rank = sc->rank,
                                .kinds = sc->kinds,
                                .seconds = sc->seconds,
                                .state = (enum rs_capture_state)sc->state,
                                .requested_ns = sc->requested_ns,
                                .delivered_ns = sc->delivered_ns,
                                .started_ns = sc->started_ns,
                                .ended_ns = sc->ended_ns,
                                .ran_kinds = sc->ran_kinds,
                                .batches = sc->batches,
                                .kernels = sc->kernels,
                                .stalls = sc->stalls};
    snprintf(c.job, sizeof c.job, "%s", job);
    snprintf(c.who, sizeof c.who, "%.*s", (int)sizeof c.who - 1, sc->who);
    snprintf(c.reason, sizeof c.reason, "%.*s", (int)sizeof c.reason - 1, sc->reason);
    snprintf(c.message, sizeof c.message, "%.*s", (int)sizeof c.message - 1, sc->message);
    if (rs_captures_restore(l->cs, &c, l->now) == 0)
        l->n++;
    else
        l->refused++;
    return 0;
}

int
rs__capture_store_load(struct rs_server *srv)
{
    struct load l = {srv->captures, rs_clock_realtime_ns(), 0, 0};
    rs_store_read *r;
    int rc;

    if ((rc = rs_store_read_begin(srv->store, &r)) != 0)
        return rc;
    rc = rs_store_captures_scan(r, load_one, &l);
    rs_store_read_end(r);
    if (rc != 0)
        rs_log(RS_LOG_ERROR, "RS-CAPTURE-LOAD", "reading the stored captures failed: %s",
               rs_strerror(rc));
    else if (l.n || l.refused)
        rs_log(RS_LOG_INFO, "RS-CAPTURE-LOAD",
               "%zu captures read back from the store (%zu not kept: the table's bound, or not "
               "captures); open ones are expired",
               l.n, l.refused);
    return rc;
}

int
rs__capture_store_start(struct rs_server *srv, unsigned period_ms, rs_capture_store **out)
{
    rs_capture_store *s = calloc(1, sizeof *s);

    if (!s)
        return -ENOMEM;
    s->srv = srv;
    rs__periodic_init(&s->periodic, &srv->loop, s, never_busy, free_store);
    rs__periodic_start(&s->periodic, on_tick, period_ms, period_ms);
    *out = s;
    return 0;
}

void
rs__capture_store_close(rs_capture_store *s)
{
    if (!s)
        return;
    flush_now(s->srv);
    rs__periodic_close(&s->periodic);
}
