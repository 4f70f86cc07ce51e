/* Stall-reason breakdown and rank-vs-peers difference (see stalls.h). */
#include "query/stalls.h"

#include "common/error.h"
#include "query/compare.h"
#include "query/stragglers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define REASONS_PER_KERNEL 4

struct reason_total {
    const char *reason;
    uint64_t samples;
};

static int
by_samples_desc(const void *x, const void *y)
{
    const struct reason_total *a = x, *b = y;
    return (a->samples < b->samples) - (a->samples > b->samples);
}

/* Reasons of the stall entries that pass `keep` (kernel == NULL: all), largest first, as
 * [{reason, samples, pct}] with at most `most` entries. */
static json_t *
reasons_json(const struct rs_profile *p, const char *kernel, size_t most)
{
    struct reason_total *v = calloc(p->n_stalls + 1, sizeof *v);
    json_t *list = json_array();
    uint64_t total = 0;
    size_t n = 0;

    if (!v || !list) {
        free(v);
        json_decref(list);
        return NULL;
    }
    for (size_t i = 0; i < p->n_stalls; i++) {
        const struct rs_profile_stall *s = &p->stalls[i];
        if (kernel && strcmp(s->kernel, kernel) != 0)
            continue;
        size_t k = 0;
        while (k < n && strcmp(v[k].reason, s->reason) != 0)
            k++;
        if (k == n)
            v[n++] = (struct reason_total){s->reason, 0};
        v[k].samples += s->samples;
        total += s->samples;
    }
    qsort(v, n, sizeof *v, by_samples_desc);
    for (size_t k = 0; k < n && k < most; k++)
        json_array_append_new(list, json_pack("{s:s, s:I, s:f}", "reason", v[k].reason, "samples",
                                              (json_int_t)v[k].samples, "pct",
                                              100.0 * (double)v[k].samples / (double)total));
    free(v);
    return list;
}

static int
by_stall_samples_desc(const void *x, const void *y)
{
    const struct rs_profile_item *a = *(const struct rs_profile_item *const *)x;
    const struct rs_profile_item *b = *(const struct rs_profile_item *const *)y;
    return (a->stall_samples < b->stall_samples) - (a->stall_samples > b->stall_samples);
}

static json_t *
kernels_json(const struct rs_profile *p, size_t limit)
{
    const struct rs_profile_item **order = calloc(p->n_items + 1, sizeof *order);
    json_t *list = json_array();
    size_t n = 0;

    if (!order || !list) {
        free(order);
        json_decref(list);
        return NULL;
    }
    for (size_t i = 0; i < p->n_items; i++)
        if (p->items[i].stall_samples)
            order[n++] = &p->items[i];
    qsort(order, n, sizeof *order, by_stall_samples_desc);
    for (size_t i = 0; i < n && i < limit; i++)
        json_array_append_new(
            list, json_pack("{s:s, s:I, s:f, s:o}", "name", order[i]->name, "samples",
                            (json_int_t)order[i]->stall_samples, "pct",
                            100.0 * (double)order[i]->stall_samples / (double)p->stall_samples,
                            "reasons", reasons_json(p, order[i]->name, REASONS_PER_KERNEL)));
    free(order);
    return list;
}

/* The rank to hold against its peers: the one asked for, else the job's first straggler. */
static int
pick_rank(rs_store_read *r, const struct rs_profile_scope *scope, uint64_t *rank, const char **why)
{
    struct rs_straggler_report rep;
    int rc;

    if (scope->rank != RS_PROFILE_ALL_RANKS) {
        *rank = scope->rank;
        *why = "requested";
        return 0;
    }
    *rank = RS_PROFILE_ALL_RANKS;
    if ((rc = rs_stragglers_evaluate_job(r, scope->job, NULL, &rep)) != 0)
        return rc;
    if (rep.n_verdicts > 0) {
        *rank = rep.verdicts[0].rank;
        *why = "straggler";
    }
    rs_straggler_report_fini(&rep);
    return 0;
}

int
rs_query_stalls(rs_store_read *r, const struct rs_profile_scope *scope, size_t limit, json_t **out)
{
    struct rs_profile p;
    json_t *vs = json_null();
    uint64_t rank;
    const char *why = NULL;
    char side;
    int rc = rs_profile_build(r, scope, &p);

    if (rc != 0)
        return rc;
    if (p.stall_samples > 0 && (rc = pick_rank(r, scope, &rank, &why)) == 0 &&
        rank != RS_PROFILE_ALL_RANKS) {
        struct rs_profile_scope peers = *scope, one = *scope;
        json_t *cmp = NULL;
        peers.rank = one.rank = rank;
        peers.peers = true;
        one.peers = false;
        rc = rs_query_compare(r, &peers, &one, limit, &side, &cmp);
        if (rc == 0) {
            json_decref(vs);
            vs = json_pack("{s:I, s:s, s:o}", "rank", (json_int_t)rank, "why", why, "comparison",
                           cmp);
        } else if (rc == RS_E_NOT_FOUND) {
            rc = 0; /* a rank without peers: no difference to show */
        }
    }
    if (rc != 0)
        goto out;
    *out = json_pack("{s:o, s:I, s:o, s:o, s:o, s:s}", "scope", rs_profile_scope_json(scope, &p),
                     "samples", (json_int_t)p.stall_samples, "reasons",
                     reasons_json(&p, NULL, (size_t)-1), "kernels", kernels_json(&p, limit),
                     "vs_peers", vs, "note",
                     p.stall_samples ? ""
                                     : "no PC-sampling data in this scope (PC sampling is off "
                                       "unless turned on for the job)");
    vs = NULL;
    rc = *out ? 0 : -ENOMEM;
out:
    json_decref(vs);
    rs_profile_fini(&p);
    return rc;
}
