/* Stall-reason breakdown, per kernel down to its PCs, and rank-vs-peers difference (see
 * stalls.h). */
#include "query/stalls.h"

#include "common/array.h"
#include "common/error.h"
#include "query/compare.h"
#include "query/stragglers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REASONS_PER_KERNEL 4
#define PCS_PER_KERNEL 8
#define REASONS_PER_PC 4

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

/* ---- per kernel, its PCs: the stall records of the scope's ranks read again, keeping the
 * (kernel, pc, reason) counts of the kernels listed ---------------------------------------- */

struct pc_count {
    size_t kernel, reason; /* indexes into pc_ctx's kernels and reasons */
    uint64_t pc, samples;
};

struct pc_ctx {
    const char **kernels; /* the kernels listed, in their order */
    size_t n_kernels;
    char **reasons; /* distinct short reason names (a few dozen at most: CUPTI's set) */
    size_t n_reasons, cap_reasons;
    struct pc_count *v;
    size_t n, cap;
};

static int
on_pc_stall(void *arg, const struct rs_stall_record *s, uint64_t at_ns, const char *kernel,
            const char *reason)
{
    struct pc_ctx *c = arg;
    const char *shortname = rs_profile_reason_short(reason);
    size_t k = 0, q = 0;

    (void)at_ns;
    while (k < c->n_kernels && strcmp(c->kernels[k], kernel) != 0)
        k++;
    if (k == c->n_kernels || !s->count)
        return 0;
    while (q < c->n_reasons && strcmp(c->reasons[q], shortname) != 0)
        q++;
    if (q == c->n_reasons) {
        char *copy = strdup(shortname);
        if (!copy || RS_ARRAY_RESERVE(c->reasons, c->cap_reasons, c->n_reasons, 1) != 0) {
            free(copy);
            return -ENOMEM;
        }
        c->reasons[c->n_reasons++] = copy;
    }
    if (RS_ARRAY_RESERVE(c->v, c->cap, c->n, 1) != 0)
        return -ENOMEM;
    c->v[c->n++] = (struct pc_count){k, q, s->pc_offset, s->count};
    return 0;
}

static int
by_kernel_pc_reason(const void *x, const void *y)
{
    const struct pc_count *a = x, *b = y;
    if (a->kernel != b->kernel)
        return a->kernel < b->kernel ? -1 : 1;
    if (a->pc != b->pc)
        return a->pc < b->pc ? -1 : 1;
    return (a->reason > b->reason) - (a->reason < b->reason);
}

static int
by_count_desc(const void *x, const void *y)
{
    const struct pc_count *a = x, *b = y;
    return (a->samples < b->samples) - (a->samples > b->samples);
}

/* [{pc: "0x1a0", samples, reasons: [{reason, samples}]}] of one kernel's counts v[0..n) (sorted
 * by pc and reason, merged): its PCS_PER_KERNEL PCs with the most samples, largest first. */
static json_t *
pcs_json(const struct pc_ctx *c, struct pc_count *v, size_t n)
{
    struct pc_count *pcs = calloc(n + 1, sizeof *pcs); /* per pc: its total (reason unused) */
    json_t *list = json_array();
    size_t n_pcs = 0;

    if (!pcs || !list)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        if (!n_pcs || pcs[n_pcs - 1].pc != v[i].pc)
            pcs[n_pcs++] = (struct pc_count){i, 0, v[i].pc, 0}; /* .kernel: first entry */
        pcs[n_pcs - 1].samples += v[i].samples;
    }
    qsort(pcs, n_pcs, sizeof *pcs, by_count_desc);
    for (size_t p = 0; p < n_pcs && p < PCS_PER_KERNEL; p++) {
        size_t first = pcs[p].kernel, end = first;
        while (end < n && v[end].pc == pcs[p].pc)
            end++;
        qsort(v + first, end - first, sizeof *v, by_count_desc); /* its reasons, largest first */
        json_t *reasons = json_array();
        char pc[24];
        snprintf(pc, sizeof pc, "0x%llx", (unsigned long long)pcs[p].pc);
        for (size_t i = first; reasons && i < end && i - first < REASONS_PER_PC; i++)
            if (json_array_append_new(reasons,
                                      json_pack("{s:s, s:I}", "reason", c->reasons[v[i].reason],
                                                "samples", (json_int_t)v[i].samples)) != 0) {
                json_decref(reasons);
                reasons = NULL;
            }
        if (!reasons || json_array_append_new(list, json_pack("{s:s, s:I, s:o}", "pc", pc, "samples",
                                                              (json_int_t)pcs[p].samples,
                                                              "reasons", reasons)) != 0)
            goto fail;
    }
    free(pcs);
    return list;
fail:
    free(pcs);
    json_decref(list);
    return NULL;
}

/* Adds "pcs" to each kernel of `kernels` (kernels_json's list) from the scope's stall records. */
static int
add_pcs(rs_store_read *r, const struct rs_profile_scope *scope, json_t *kernels)
{
    struct pc_ctx c = {0};
    struct rs_rank_info *ranks = NULL;
    size_t n_ranks = 0, i = 0;
    int rc;

    if (!(c.kernels = calloc(json_array_size(kernels) + 1, sizeof *c.kernels)))
        return -ENOMEM;
    for (c.n_kernels = 0; c.n_kernels < json_array_size(kernels); c.n_kernels++)
        c.kernels[c.n_kernels] =
            json_string_value(json_object_get(json_array_get(kernels, c.n_kernels), "name"));
    if ((rc = rs_store_ranks_get(r, scope->job, &ranks, &n_ranks)) != 0)
        goto out;
    for (size_t k = 0; k < n_ranks; k++)
        if (rs_profile_scope_has(scope, ranks[k].rank) &&
            (rc = rs_store_stalls_scan(r, scope->job, ranks[k].rank, scope->since_ns,
                                       scope->until_ns ? scope->until_ns : UINT64_MAX,
                                       on_pc_stall, &c)) != 0)
            goto out;
    qsort(c.v, c.n, sizeof *c.v, by_kernel_pc_reason);
    size_t m = 0; /* merge equal (kernel, pc, reason): several ranks, several batches */
    for (size_t x = 0; x < c.n; x++)
        if (m && by_kernel_pc_reason(&c.v[m - 1], &c.v[x]) == 0)
            c.v[m - 1].samples += c.v[x].samples;
        else
            c.v[m++] = c.v[x];
    for (size_t k = 0; k < c.n_kernels; k++) {
        size_t end = i;
        while (end < m && c.v[end].kernel == k)
            end++;
        json_t *pcs = pcs_json(&c, c.v + i, end - i);
        if (!pcs || json_object_set_new(json_array_get(kernels, k), "pcs", pcs) != 0) {
            rc = -ENOMEM;
            goto out;
        }
        i = end;
    }
out:
    for (size_t q = 0; q < c.n_reasons; q++)
        free(c.reasons[q]);
    free(c.reasons);
    free(c.v);
    free(c.kernels);
    free(ranks);
    return rc;
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
    json_t *vs = json_null(), *kernels = NULL;
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
    if (!(kernels = kernels_json(&p, limit))) {
        rc = -ENOMEM;
        goto out;
    }
    if (p.stall_samples && (rc = add_pcs(r, scope, kernels)) != 0)
        goto out;
    *out = json_pack("{s:o, s:I, s:o, s:O, s:o, s:s}", "scope", rs_profile_scope_json(scope, &p),
                     "samples", (json_int_t)p.stall_samples, "reasons",
                     reasons_json(&p, NULL, (size_t)-1), "kernels", kernels,
                     "vs_peers", vs, "note",
                     p.stall_samples ? ""
                                     : "no PC-sampling data in this scope (PC sampling is off "
                                       "unless turned on for the job)");
    vs = NULL;
    rc = *out ? 0 : -ENOMEM;
out:
    json_decref(vs);
    json_decref(kernels);
    rs_profile_fini(&p);
    return rc;
}
