/* A whole job's profile from its running totals (storage rs_store_job_totals), for `top`: the
 * kernels by name, NCCL kernels by op, host syncs and PC samples that rs_profile_build would sum
 * over every record of the job, read as O(kernel names + ranks) entries — the cost of a whole-job
 * answer follows the job's size, not its age. Where the totals cannot give the same profile the
 * caller scans (profile_int.h). */
#include "query/profile_int.h"

#include "common/array.h"
#include "common/error.h"
#include "proto/wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A kernel's PC samples, kept until every kernel item is known. */
struct stall {
    char *kernel;
    uint64_t samples;
};

struct fill {
    struct rs_profile *p;
    struct stall *stalls;
    size_t n_stalls, cap_stalls;
    bool scan; /* the totals cannot stand for the records */
};

static int
on_total(void *arg, const struct rs_store_total *t)
{
    struct fill *f = arg;
    struct rs_profile *p = f->p;
    struct rs_profile_item *it;

    switch (t->kind) {
    case RS_STORE_TOTAL_RANK:
        if (t->launch_waits_overlap)
            f->scan = true; /* their time is their union, not their sum */
        p->ranks += t->has_data;
        return 0;
    case RS_STORE_TOTAL_KERNEL:
    case RS_STORE_TOTAL_COLLECTIVE:
        it = rs__profile_item_get(p, t->kind == RS_STORE_TOTAL_KERNEL ? RS_PROFILE_KERNEL
                                                                      : RS_PROFILE_COLLECTIVE,
                                  t->kind == RS_STORE_TOTAL_KERNEL
                                      ? t->name
                                      : rs_coll_op_name((enum rs_coll_op)t->id));
        if (!it)
            return -ENOMEM;
        it->count += t->count;
        it->ns += t->ns;
        return 0;
    case RS_STORE_TOTAL_SYNC:
        p->syncs[t->id].count += t->count;
        p->syncs[t->id].ns += t->ns;
        return 0;
    case RS_STORE_TOTAL_STALLS:
        if (RS_ARRAY_RESERVE(f->stalls, f->cap_stalls, f->n_stalls, 1) != 0)
            return -ENOMEM;
        if (!(f->stalls[f->n_stalls].kernel = strdup(t->name)))
            return -ENOMEM;
        f->stalls[f->n_stalls++].samples = t->count;
        p->stall_samples += t->count;
        return 0;
    }
    return RS_E_CORRUPT;
}

/* Whether a rank's records would add what the totals leave out: windows-traced kernels (their
 * steps are counted against traced spans), or steps inferred from NCCL kernels (a rank without
 * step records, while the job's collectives are few enough to be kept). */
static bool
ranks_need_records(const struct rs_rank_info *ranks, size_t n, bool too_many_colls,
                   uint64_t *rank_steps)
{
    for (size_t i = 0; i < n; i++) {
        if (ranks[i].collector_flags & RS_COLLECTOR_KERNELS_SAMPLED)
            return true;
        if (ranks[i].n_steps == 0 && ranks[i].n_collectives > 0 && !too_many_colls)
            return true;
        *rank_steps += ranks[i].n_steps;
    }
    return false;
}

int
rs__profile_from_totals(rs_store_read *r, const struct rs_profile_scope *scope,
                        struct rs_profile *out)
{
    struct rs_store_job_totals jt;
    struct rs_rank_info *ranks = NULL;
    size_t n_ranks = 0;
    struct fill f = {out, NULL, 0, 0, false};
    int rc;

    memset(out, 0, sizeof *out);
    if (scope->rank != RS_PROFILE_ALL_RANKS || scope->peers || scope->since_ns || scope->until_ns)
        return 1;
    if ((rc = rs_store_ranks_get(r, scope->job, &ranks, &n_ranks)) != 0)
        return rc;
    if ((rc = rs_store_job_totals(r, scope->job, &jt, on_total, &f)) != 0)
        goto out;
    bool too_many = jt.collectives > RS_PROFILE_MAX_COLLECTIVES;
    /* busy time (when no kernel window hides the intervals) is a union over records */
    if (!jt.has_totals || !jt.complete || f.scan || (!jt.kernel_windows && !too_many) ||
        ranks_need_records(ranks, n_ranks, too_many, &out->rank_steps)) {
        rc = 1;
        goto out;
    }
    out->busy_known = false;
    out->t0 = jt.t0;
    out->t1 = jt.t1;
    for (size_t i = 0; i < f.n_stalls; i++) {
        struct rs_profile_item *it =
            (struct rs_profile_item *)rs_profile_find(out, RS_PROFILE_KERNEL, f.stalls[i].kernel);
        if (it)
            it->stall_samples += f.stalls[i].samples;
    }
out:
    for (size_t i = 0; i < f.n_stalls; i++)
        free(f.stalls[i].kernel);
    free(f.stalls);
    free(ranks);
    if (rc != 0)
        rs_profile_fini(out);
    return rc;
}
