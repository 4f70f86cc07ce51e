/* Grouping collective records into cross-rank instances (see instances.h). */
#include "query/instances.h"

#include "common/array.h"
#include "query/stats.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

struct grouping {
    int (*cb)(void *, const struct rs_instance *);
    void *arg;
    struct rs_instance cur;
    struct rs_instance_member *members;
    size_t cap;
    int error;
};

static int
emit(struct grouping *g)
{
    struct rs_instance *in = &g->cur;

    if (in->n == 0)
        return 0;
    in->members = g->members;
    in->min_start_ns = in->max_start_ns = g->members[0].start_ns;
    in->min_dur_ns = in->max_dur_ns = g->members[0].dur_ns;
    in->last = 0;
    in->at_min = 1;
    for (size_t i = 1; i < in->n; i++) {
        const struct rs_instance_member *m = &g->members[i];
        if (m->start_ns < in->min_start_ns)
            in->min_start_ns = m->start_ns;
        if (m->start_ns > in->max_start_ns)
            in->max_start_ns = m->start_ns;
        if (m->dur_ns > in->max_dur_ns)
            in->max_dur_ns = m->dur_ns;
        if (m->dur_ns < in->min_dur_ns) {
            in->min_dur_ns = m->dur_ns;
            in->last = i;
            in->at_min = 1;
        } else if (m->dur_ns == in->min_dur_ns) {
            in->at_min++;
        }
    }
    int rc = g->cb(g->arg, in);
    in->n = 0;
    return rc;
}

static int
on_record(void *arg, uint32_t rank, const struct rs_collective_record *c)
{
    struct grouping *g = arg;

    if (g->cur.n == 0 || c->comm_hash != g->cur.comm || c->op != g->cur.op ||
        c->seq != g->cur.seq) {
        if ((g->error = emit(g)) != 0)
            return 1;
        g->cur.comm = c->comm_hash;
        g->cur.op = c->op;
        g->cur.seq = c->seq;
    }
    if (RS_ARRAY_RESERVE(g->members, g->cap, g->cur.n, 1) != 0) {
        g->error = -ENOMEM;
        return 1;
    }
    g->members[g->cur.n++] =
        (struct rs_instance_member){rank, c->start_ns, c->end_ns - c->start_ns};
    return 0;
}

/* Groups what one of the scans passes; full: the whole job, else [t0, t1). */
static int
scan(rs_store_read *r, const char *job, bool full, uint64_t t0, uint64_t t1,
     int (*cb)(void *arg, const struct rs_instance *in), void *arg)
{
    struct grouping g = {cb, arg, {0}, NULL, 0, 0};
    int rc = full ? rs_store_collectives_scan(r, job, on_record, &g)
                  : rs_store_collectives_scan_range(r, job, t0, t1, on_record, &g);

    if (rc == 1)
        rc = g.error;
    else if (rc == 0)
        rc = emit(&g);
    free(g.members);
    return rc;
}

int
rs_instances_scan(rs_store_read *r, const char *job,
                  int (*cb)(void *arg, const struct rs_instance *in), void *arg)
{
    return scan(r, job, true, 0, 0, cb, arg);
}

int
rs_instances_scan_range(rs_store_read *r, const char *job, uint64_t t0, uint64_t t1,
                        int (*cb)(void *arg, const struct rs_instance *in), void *arg)
{
    return scan(r, job, false, t0, t1, cb, arg);
}

double
rs_instance_peer_wait_ns(const struct rs_instance *in, double *scratch)
{
    size_t n = 0;

    if (in->n < 2 || in->at_min != 1)
        return 0;
    for (size_t m = 0; m < in->n; m++)
        if (m != in->last)
            scratch[n++] = (double)(in->members[m].dur_ns - in->min_dur_ns);
    return rs_quantile(scratch, n, 0.5);
}
