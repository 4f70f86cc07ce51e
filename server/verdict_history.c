/* Records the evaluator's verdict changes in the store through one writer task per evaluation
 * (see verdict_history.h). */
#include "server/verdict_history.h"

#include "common/array.h"
#include "common/error.h"
#include "common/log.h"
#include "server/server_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define NOTES_PER_STEP 1000 /* notes per transaction: keeps a writer step short */

struct notes_task {
    struct rs_verdict_notes l;
    size_t next; /* the first note not yet recorded */
};

int
rs__verdict_notes_add(struct rs_verdict_notes *l, const char *job, uint32_t rank, bool active,
                      double slowdown, uint64_t now_ns)
{
    if (RS_ARRAY_RESERVE(l->v, l->cap, l->n, 1) != 0)
        return -ENOMEM;
    struct rs_verdict_note *n = &l->v[l->n++];
    snprintf(n->job, sizeof n->job, "%s", job);
    n->rank = rank;
    n->active = active;
    n->slowdown = slowdown;
    n->now_ns = now_ns;
    return 0;
}

static void
lost(size_t n, int rc)
{
    rs_log_limited(60, RS_LOG_ERROR, "RS-VERDICT-HISTORY",
                   "storing %zu straggler verdict changes failed: %s (the fleet view misses them)",
                   n, rs_strerror(rc));
}

static int
record(rs_store_write *w, void *arg, bool *done) /* writer thread */
{
    struct notes_task *t = arg;
    size_t end = t->next + NOTES_PER_STEP < t->l.n ? t->next + NOTES_PER_STEP : t->l.n;

    for (; t->next < end; t->next++) {
        const struct rs_verdict_note *n = &t->l.v[t->next];
        int rc = rs_store_verdict_note(w, n->job, n->rank, n->active, n->slowdown, n->now_ns);
        if (rc != 0 && rc != RS_E_NOT_FOUND) /* (a job deleted meanwhile has no history) */
            return rc;
    }
    *done = t->next == t->l.n;
    return 0;
}

static void
recorded(void *arg, int status) /* writer thread */
{
    struct notes_task *t = arg;

    if (status != 0)
        lost(t->l.n - t->next, status);
    rs__verdict_notes_fini(&t->l);
    free(t);
}

void
rs__verdict_notes_submit(struct rs_server *srv, struct rs_verdict_notes *l)
{
    struct notes_task *t;
    int rc = -ENOMEM;

    if (l->n == 0)
        return;
    if ((t = calloc(1, sizeof *t))) {
        t->l = *l;
        *l = (struct rs_verdict_notes){0};
        if ((rc = rs_writer_submit_task(srv->writer, record, recorded, t)) == 0)
            return;
        *l = t->l;
        free(t);
    }
    lost(l->n, rc);
    rs__verdict_notes_fini(l);
}

void
rs__verdict_notes_fini(struct rs_verdict_notes *l)
{
    free(l->v);
    *l = (struct rs_verdict_notes){0};
}
