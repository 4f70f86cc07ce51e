/* Top kernels per step (see top.h). */
#include "query/top.h"
#include "query/profile_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int
by_time_desc(const void *a, const void *b)
{
    const struct rs_profile_item *x = *(const struct rs_profile_item *const *)a;
    const struct rs_profile_item *y = *(const struct rs_profile_item *const *)b;
    if (x->ns != y->ns)
        return (x->ns < y->ns) - (x->ns > y->ns);
    /* ties in a fixed order, whatever order the items were found in (records or totals) */
    if (x->kind != y->kind)
        return (x->kind > y->kind) - (x->kind < y->kind);
    return strcmp(x->name, y->name);
}

int
rs_query_top(rs_store_read *r, const struct rs_profile_scope *scope, size_t limit, json_t **out)
{
    return rs_query_top_sourced(r, scope, limit, out, NULL);
}

int
rs_query_top_sourced(rs_store_read *r, const struct rs_profile_scope *scope, size_t limit,
                     json_t **out, bool *from_totals)
{
    struct rs_profile p;
    const struct rs_profile_item **order = NULL;
    const char *unit;
    json_t *rows = NULL;
    uint64_t total_ns = 0, other_ns = 0, other_count = 0;
    /* the whole job from its running totals when they stand for its records, else a scan */
    int rc = rs__profile_from_totals(r, scope, &p);

    if (from_totals)
        *from_totals = rc == 0;
    if (rc == 1)
        rc = rs_profile_build(r, scope, &p);
    if (rc != 0)
        return rc;
    double per = rs_profile_divisor(&p, &unit);
    if ((p.n_items && !(order = malloc(p.n_items * sizeof *order))) || !(rows = json_array())) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < p.n_items; i++) {
        order[i] = &p.items[i];
        total_ns += p.items[i].ns;
    }
    if (p.n_items)
        qsort(order, p.n_items, sizeof *order, by_time_desc);
    for (size_t i = 0; i < p.n_items; i++) {
        const struct rs_profile_item *it = order[i];
        if (i >= limit) {
            other_ns += it->ns;
            other_count += it->count;
            continue;
        }
        json_array_append_new(
            rows, json_pack("{s:s, s:s, s:f, s:f, s:f, s:f, s:I}", "name", it->name, "kind",
                            it->kind == RS_PROFILE_KERNEL ? "kernel" : "nccl", "ms",
                            (double)it->ns / 1e6 / per, "calls", (double)it->count / per, "mean_us",
                            (double)it->ns / 1e3 / (double)it->count, "share_pct",
                            total_ns ? 100.0 * (double)it->ns / (double)total_ns : 0.0,
                            "stall_samples", (json_int_t)it->stall_samples));
    }
    *out = json_pack("{s:o, s:f, s:o, s:o, s:{s:I, s:f, s:f}, s:o?, s:o?}", "scope",
                     rs_profile_scope_json(scope, &p), "total_ms", (double)total_ns / 1e6 / per,
                     "gpu_busy_ms", rs_profile_busy_json(&p, per), "kernels", rows, "other",
                     "items", (json_int_t)(p.n_items > limit ? p.n_items - limit : 0), "ms",
                     (double)other_ns / 1e6 / per, "calls", (double)other_count / per, "host_sync",
                     rs_profile_syncs_json(&p, per), "launch_wait",
                     rs_profile_launch_wait_json(&p, per));
    rows = NULL;
    /* kernels traced in windows (RANKSCOPE_KERNELS=window): these figures are a sample */
    if (*out && json_object_set_new(*out, "sampled", json_boolean(p.sampled_ranks > 0)) != 0) {
        json_decref(*out);
        *out = NULL;
    }
    rc = *out ? 0 : -ENOMEM;
out:
    json_decref(rows);
    free(order);
    rs_profile_fini(&p);
    return rc;
}
