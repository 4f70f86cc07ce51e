/* Hang verdicts from the ranks' in-flight conditions (see hangs.h). */
#include "query/hangs.h"

#include "common/error.h"
#include "proto/wire.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct waiter {
    const struct rs_rank_info *rank;
    struct rs_in_flight f;
};

static int
by_comm_then_rank(const void *a, const void *b)
{
    const struct waiter *x = a, *y = b;
    if (x->f.comm != y->f.comm)
        return x->f.comm < y->f.comm ? -1 : 1;
    return x->rank->rank < y->rank->rank ? -1 : x->rank->rank > y->rank->rank;
}

/* Whether the collector said it recently: when it started waiting plus how long it had waited
 * when it said so (ms) (a rank sends nothing else while it hangs, and its process may be gone). */
static bool
fresh(const struct rs_in_flight *f, uint64_t now_ns, uint64_t fresh_ns)
{
    return !fresh_ns || (f->since_ms + f->for_ms) * 1000000u + fresh_ns >= now_ns;
}

/* The (op, seq) most of w[0..n) report; ties: the lowest seq. */
static const struct rs_in_flight *
majority(const struct waiter *w, size_t n)
{
    const struct rs_in_flight *best = &w[0].f;
    size_t best_count = 0;

    for (size_t i = 0; i < n; i++) {
        size_t c = 0;
        for (size_t j = 0; j < n; j++)
            c += w[j].f.seq == w[i].f.seq && strcmp(w[j].f.op, w[i].f.op) == 0;
        if (c > best_count || (c == best_count && w[i].f.seq < best->seq)) {
            best = &w[i].f;
            best_count = c;
        }
    }
    return best;
}

static int
rank_order(const void *a, const void *b)
{
    const struct rs_hang_rank *x = a, *y = b;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* One verdict for the waiters of one communicator. */
static int
make_hang(const struct waiter *w, size_t n, const struct rs_rank_info *ranks, size_t n_ranks,
          struct rs_hang *h)
{
    const struct rs_in_flight *m = majority(w, n);
    uint32_t world = 0;

    memset(h, 0, sizeof *h);
    h->comm = m->comm;
    h->seq = m->seq;
    h->comm_size = m->comm_size;
    snprintf(h->op, sizeof h->op, "%s", m->op);
    h->since_ns = UINT64_MAX;
    if (!(h->waiting = calloc(n, sizeof *h->waiting)))
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        h->waiting[i] = (struct rs_hang_rank){w[i].rank->rank, w[i].rank->host, w[i].rank->gpu_uuid,
                                              w[i].f.gpu_started};
        if (w[i].f.since_ms * 1000000u < h->since_ns)
            h->since_ns = w[i].f.since_ms * 1000000u;
        if (w[i].rank->world_size > world)
            world = w[i].rank->world_size;
    }
    h->n_waiting = n;
    if (m->comm_size == world && n_ranks > 0) {
        /* the world's communicator: every other rank of the job is a member; one that reports an
         * operation in flight of which it has not spoken for long is neither here nor there */
        if (!(h->absent = calloc(n_ranks, sizeof *h->absent))) {
            free(h->waiting);
            return -ENOMEM;
        }
        for (size_t i = 0; i < n_ranks; i++) {
            bool waits = false;
            for (size_t j = 0; j < n && !waits; j++)
                waits = w[j].rank->rank == ranks[i].rank;
            if (!waits && !(ranks[i].collector_flags & RS_COLLECTOR_IN_FLIGHT))
                h->absent[h->n_absent++] =
                    (struct rs_hang_rank){ranks[i].rank, ranks[i].host, ranks[i].gpu_uuid, false};
        }
        qsort(h->absent, h->n_absent, sizeof *h->absent, rank_order);
    }
    size_t known = n + h->n_absent;
    h->absent_unknown = m->comm_size > known ? m->comm_size - (uint32_t)known : 0;
    return 0;
}

void
rs_hang_report_fini(struct rs_hang_report *rep)
{
    for (size_t i = 0; i < rep->n; i++) {
        free(rep->hangs[i].waiting);
        free(rep->hangs[i].absent);
    }
    free(rep->hangs);
    memset(rep, 0, sizeof *rep);
}

int
rs_hangs_find(const struct rs_rank_info *ranks, size_t n, uint64_t now_ns, uint64_t fresh_ns,
              struct rs_hang_report *out)
{
    struct rs_hang_report rep = {0};
    struct waiter *w = calloc(n ? n : 1, sizeof *w);
    size_t nw = 0;
    int rc = 0;

    if (!w)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        if (!(ranks[i].collector_flags & RS_COLLECTOR_IN_FLIGHT))
            continue;
        if (rs_in_flight_parse(ranks[i].collector_status, &w[nw].f) != 0) {
            rep.malformed++;
            continue;
        }
        if (fresh(&w[nw].f, now_ns, fresh_ns))
            w[nw++].rank = &ranks[i];
    }
    qsort(w, nw, sizeof *w, by_comm_then_rank);
    if (nw && !(rep.hangs = calloc(nw, sizeof *rep.hangs)))
        rc = -ENOMEM;
    for (size_t i = 0; rc == 0 && i < nw;) {
        size_t j = i;
        while (j < nw && w[j].f.comm == w[i].f.comm)
            j++;
        if ((rc = make_hang(w + i, j - i, ranks, n, &rep.hangs[rep.n])) == 0)
            rep.n++;
        i = j;
    }
    free(w);
    if (rc != 0) {
        rs_hang_report_fini(&rep);
        return rc;
    }
    *out = rep;
    return 0;
}

static json_t *
ranks_json(const struct rs_hang_rank *r, size_t n, bool with_gpu_started)
{
    json_t *a = json_array();

    for (size_t i = 0; a && i < n; i++) {
        json_t *o = json_pack("{s:I, s:s, s:s}", "rank", (json_int_t)r[i].rank, "host", r[i].host,
                              "gpu_uuid", r[i].gpu_uuid);
        if (o && with_gpu_started)
            json_object_set_new(o, "gpu_started", json_boolean(r[i].gpu_started));
        if (!o || json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *
rs_hang_report_json(const struct rs_hang_report *rep)
{
    json_t *list = json_array();

    for (size_t i = 0; list && i < rep->n; i++) {
        const struct rs_hang *h = &rep->hangs[i];
        char comm[24];
        snprintf(comm, sizeof comm, "0x%016" PRIx64, h->comm);
        json_t *waiting = ranks_json(h->waiting, h->n_waiting, true);
        json_t *absent = ranks_json(h->absent, h->n_absent, false);
        json_t *o = waiting && absent
                        ? json_pack("{s:s, s:s, s:I, s:I, s:I, s:o, s:o, s:I}", "comm", comm, "op",
                                    h->op, "seq", (json_int_t)h->seq, "since_ns",
                                    (json_int_t)h->since_ns, "comm_size", (json_int_t)h->comm_size,
                                    "waiting", waiting, "never_arrived", absent,
                                    "never_arrived_unknown", (json_int_t)h->absent_unknown)
                        : NULL;
        if (!o) {
            json_decref(waiting);
            json_decref(absent);
        }
        if (!o || json_array_append_new(list, o) != 0) {
            json_decref(list);
            return NULL;
        }
    }
    return list ? json_pack("{s:o, s:I}", "hangs", list, "malformed_statuses",
                            (json_int_t)rep->malformed)
                : NULL;
}

int
rs_query_hangs(rs_store_read *r, const char *job, uint64_t now_ns, json_t **out)
{
    struct rs_rank_info *ranks = NULL;
    struct rs_hang_report rep;
    size_t n = 0;
    int rc;

    if ((rc = rs_store_ranks_get(r, job, &ranks, &n)) != 0)
        return rc;
    if ((rc = rs_hangs_find(ranks, n, now_ns, RS_HANG_FRESH_NS, &rep)) == 0) {
        json_t *doc = rs_hang_report_json(&rep);
        if (doc && json_object_set_new(doc, "job", json_string(job)) == 0)
            *out = doc;
        else
            rc = -ENOMEM;
        if (rc != 0)
            json_decref(doc);
        rs_hang_report_fini(&rep);
    }
    free(ranks);
    return rc;
}
