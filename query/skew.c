/* NCCL wait skew over the collective instances (see skew.h, instances.h). */
#include "query/skew.h"

#include "common/array.h"
#include "common/error.h"
#include "query/instances.h"
#include "query/stats.h"

#include "common/span.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct group { /* per (communicator, op) */
    uint64_t comm;
    uint32_t op;
    uint64_t instances;
    double wait_ms;
    struct rs_samples skew_ms;
};

struct rank_total {
    double wait_ms;
    double caused_ms; /* the others' median wait where it arrived last (rs_instance_peer_wait_ns) */
    uint64_t instances, last;
};

struct skew {
    const struct rs_skew_options *opts;
    uint64_t instances, unmatched, ties;
    uint64_t t0, t1; /* earliest start and latest end of the matched instances counted */
    struct rs_samples skew_ms, spread_ms;
    struct rank_total *ranks; /* indexed by rank */
    uint32_t n_ranks;
    double caused_ms;  /* over all ranks */
    double *scratch;   /* rs_instance_peer_wait_ns */
    size_t cap_scratch;
    struct group *groups;
    size_t n_groups, cap_groups;
    size_t cap_ranks; /* of ranks (n_ranks are in use) */
};

static struct group *
group_of(struct skew *s, uint64_t comm, uint32_t op)
{
    for (size_t i = 0; i < s->n_groups; i++)
        if (s->groups[i].comm == comm && s->groups[i].op == op)
            return &s->groups[i];
    if (RS_ARRAY_RESERVE(s->groups, s->cap_groups, s->n_groups, 1) != 0)
        return NULL;
    struct group *g = &s->groups[s->n_groups++];
    memset(g, 0, sizeof *g);
    g->comm = comm;
    g->op = op;
    return g;
}

static int
grow_ranks(struct skew *s, uint32_t rank)
{
    if (rank < s->n_ranks)
        return 0;
    if (rank >= (1u << 24))
        return RS_E_CORRUPT; /* no job has 16 M ranks: refuse to allocate for it */
    if (RS_ARRAY_RESERVE(s->ranks, s->cap_ranks, s->n_ranks, rank + 1 - s->n_ranks) != 0)
        return -ENOMEM;
    memset(s->ranks + s->n_ranks, 0, (rank + 1 - s->n_ranks) * sizeof *s->ranks);
    s->n_ranks = rank + 1;
    return 0;
}

/* Folds one instance into the totals. */
static int
add_instance(void *arg, const struct rs_instance *in)
{
    struct skew *s = arg;
    struct group *g;
    int rc;

    if ((s->opts->since_ns && in->min_start_ns < s->opts->since_ns) ||
        (s->opts->until_ns && in->min_start_ns >= s->opts->until_ns))
        return 0; /* outside the window */
    if (in->n < 2) {
        s->unmatched++;
        return 0;
    }
    if (!(g = group_of(s, in->comm, in->op)))
        return -ENOMEM;
    s->instances++;
    g->instances++;
    for (size_t i = 0; i < in->n; i++) {
        const struct rs_instance_member *m = &in->members[i];
        double wait = (double)(m->dur_ns - in->min_dur_ns) / 1e6;
        rs_span_cover(&s->t0, &s->t1, m->start_ns, m->start_ns + m->dur_ns);
        if ((rc = grow_ranks(s, m->rank)) != 0)
            return rc;
        s->ranks[m->rank].wait_ms += wait;
        s->ranks[m->rank].instances++;
        g->wait_ms += wait;
    }
    if (in->at_min == 1) {
        if (RS_ARRAY_RESERVE(s->scratch, s->cap_scratch, 0, in->n) != 0)
            return -ENOMEM;
        double caused = rs_instance_peer_wait_ns(in, s->scratch) / 1e6;
        s->ranks[in->members[in->last].rank].last++;
        s->ranks[in->members[in->last].rank].caused_ms += caused;
        s->caused_ms += caused;
    } else
        s->ties++;
    double skew = (double)(in->max_dur_ns - in->min_dur_ns) / 1e6;
    if ((rc = rs_samples_add(&s->skew_ms, skew)) || (rc = rs_samples_add(&g->skew_ms, skew)) ||
        (rc = rs_samples_add(&s->spread_ms, (double)(in->max_start_ns - in->min_start_ns) / 1e6)))
        return rc;
    return 0;
}

static json_t *
dist_json(struct rs_samples *v)
{
    return json_pack("{s:f, s:f, s:f}", "p50", rs_quantile(v->v, v->n, 0.5), "p95",
                     rs_quantile(v->v, v->n, 0.95), "max", rs_quantile(v->v, v->n, 1.0));
}

static json_t *
report_json(struct skew *s, const char *job)
{
    json_t *ranks = json_array(), *groups = json_array();
    char comm[24];

    for (uint32_t r = 0; ranks && r < s->n_ranks; r++) {
        const struct rank_total *t = &s->ranks[r];
        if (t->instances == 0)
            continue;
        json_array_append_new(ranks,
                              json_pack("{s:I, s:I, s:f, s:I, s:f, s:f, s:f}", "rank",
                                        (json_int_t)r, "instances", (json_int_t)t->instances,
                                        "wait_ms", t->wait_ms, "last_arrivals", (json_int_t)t->last,
                                        "last_frac", (double)t->last / (double)t->instances,
                                        "caused_ms", t->caused_ms, "wait_share",
                                        s->caused_ms > 0 ? t->caused_ms / s->caused_ms : 0.0));
    }
    for (size_t i = 0; groups && i < s->n_groups; i++) {
        struct group *g = &s->groups[i];
        snprintf(comm, sizeof comm, "%016" PRIx64, g->comm);
        json_array_append_new(groups, json_pack("{s:s, s:s, s:I, s:f, s:o}", "comm", comm, "op",
                                                rs_coll_op_name(g->op), "instances",
                                                (json_int_t)g->instances, "wait_ms", g->wait_ms,
                                                "skew_ms", dist_json(&g->skew_ms)));
    }
    /* the window every figure covers: the requested range, or all of the job's instances */
    json_t *window =
        json_pack("{s:I, s:I, s:b}", "since_ns", (json_int_t)s->t0, "until_ns", (json_int_t)s->t1,
                  "whole_job", !s->opts->since_ns && !s->opts->until_ns);
    return json_pack("{s:s, s:o, s:I, s:I, s:I, s:o, s:o, s:o, s:o}", "job", job, "window", window,
                     "instances", (json_int_t)s->instances, "unmatched_instances",
                     (json_int_t)s->unmatched, "ties", (json_int_t)s->ties, "skew_ms",
                     dist_json(&s->skew_ms), "arrival_spread_ms", dist_json(&s->spread_ms), "ranks",
                     ranks ? ranks : json_array(), "communicators", groups ? groups : json_array());
}

int
rs_query_skew(rs_store_read *r, const char *job, const struct rs_skew_options *opts, json_t **out)
{
    struct rs_job_info info;
    struct skew s;
    int rc = rs_store_job_get(r, job, &info);

    if (rc != 0)
        return rc;
    memset(&s, 0, sizeof s);
    s.opts = opts;
    rc = rs_instances_scan(r, job, add_instance, &s);
    if (rc == 0) {
        *out = report_json(&s, job);
        if (!*out)
            rc = -ENOMEM;
    }
    rs_samples_fini(&s.skew_ms);
    rs_samples_fini(&s.spread_ms);
    for (size_t i = 0; i < s.n_groups; i++)
        rs_samples_fini(&s.groups[i].skew_ms);
    free(s.groups);
    free(s.ranks);
    free(s.scratch);
    return rc;
}
