/* Comparing two profiles (see compare.h). */
#include "query/compare.h"

#include "common/error.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct row {
    const char *name;
    enum rs_profile_kind kind;
    double a_ms, b_ms, a_calls, b_calls;
};

static int
by_change_desc(const void *x, const void *y)
{
    const struct row *a = x, *b = y;
    double da = fabs(a->b_ms - a->a_ms), db = fabs(b->b_ms - b->a_ms);
    return (da < db) - (da > db);
}

/* One row per item of either side. */
static int
align(const struct rs_profile *a, double per_a, const struct rs_profile *b, double per_b,
      struct row **out, size_t *n)
{
    struct row *v = calloc(a->n_items + b->n_items + 1, sizeof *v);
    size_t k = 0;

    if (!v)
        return -ENOMEM;
    for (size_t i = 0; i < a->n_items; i++) {
        const struct rs_profile_item *x = &a->items[i];
        const struct rs_profile_item *y = rs_profile_find(b, x->kind, x->name);
        v[k++] = (struct row){x->name,
                              x->kind,
                              (double)x->ns / 1e6 / per_a,
                              y ? (double)y->ns / 1e6 / per_b : 0,
                              (double)x->count / per_a,
                              y ? (double)y->count / per_b : 0};
    }
    for (size_t i = 0; i < b->n_items; i++) {
        const struct rs_profile_item *y = &b->items[i];
        if (rs_profile_find(a, y->kind, y->name))
            continue;
        v[k++] = (struct row){
            y->name, y->kind, 0, (double)y->ns / 1e6 / per_b, 0, (double)y->count / per_b};
    }
    *out = v;
    *n = k;
    return 0;
}

struct mix {
    const char *reason;
    double a_pct, b_pct;
};

static int
by_mix_change_desc(const void *x, const void *y)
{
    const struct mix *a = x, *b = y;
    double da = fabs(a->b_pct - a->a_pct), db = fabs(b->b_pct - b->a_pct);
    return (da < db) - (da > db);
}

/* Share of samples per reason on both sides, largest change first ([] unless both have samples). */
static json_t *
stall_mix(const struct rs_profile *a, const struct rs_profile *b)
{
    json_t *list = json_array();
    struct mix *v = NULL;
    size_t n = 0;

    if (!list || a->stall_samples == 0 || b->stall_samples == 0 ||
        !(v = calloc(a->n_stalls + b->n_stalls, sizeof *v)))
        return list;
    for (size_t i = 0; i < a->n_stalls + b->n_stalls; i++) {
        const char *reason =
            i < a->n_stalls ? a->stalls[i].reason : b->stalls[i - a->n_stalls].reason;
        size_t k = 0;
        while (k < n && strcmp(v[k].reason, reason) != 0)
            k++;
        if (k < n)
            continue;
        v[n++] = (struct mix){
            reason, 100.0 * (double)rs_profile_reason_samples(a, reason) / (double)a->stall_samples,
            100.0 * (double)rs_profile_reason_samples(b, reason) / (double)b->stall_samples};
    }
    qsort(v, n, sizeof *v, by_mix_change_desc);
    for (size_t k = 0; k < n; k++)
        json_array_append_new(list, json_pack("{s:s, s:f, s:f, s:f}", "reason", v[k].reason,
                                              "a_pct", v[k].a_pct, "b_pct", v[k].b_pct,
                                              "change_pts", v[k].b_pct - v[k].a_pct));
    free(v);
    return list;
}

/* Host synchronizations per kind on both sides ([] when neither side has any): the host waiting
 * for the GPU. */
static json_t *
sync_rows(const struct rs_profile *a, double per_a, const struct rs_profile *b, double per_b)
{
    json_t *list = json_array();

    for (uint32_t k = 0; list && k < RS_COPY_KIND_COUNT; k++) {
        const struct rs_profile_sync *x = &a->syncs[k], *y = &b->syncs[k];
        if ((x->count == 0 && y->count == 0) || k == RS_LAUNCH_WAIT)
            continue;
        double a_ms = (double)x->ns / 1e6 / per_a, b_ms = (double)y->ns / 1e6 / per_b;
        json_array_append_new(
            list, json_pack("{s:s, s:f, s:f, s:f, s:f, s:f}", "name", rs_copy_kind_name(k), "a_ms",
                            a_ms, "b_ms", b_ms, "change_ms", b_ms - a_ms, "a_calls",
                            (double)x->count / per_a, "b_calls", (double)y->count / per_b));
    }
    return list;
}

/* Launch waits — the GPU waiting for the host — on both sides (null when neither has any). */
static json_t *
launch_wait_row(const struct rs_profile *a, double per_a, const struct rs_profile *b, double per_b)
{
    const struct rs_profile_sync *x = &a->syncs[RS_LAUNCH_WAIT], *y = &b->syncs[RS_LAUNCH_WAIT];
    if (x->count == 0 && y->count == 0)
        return json_null();
    double a_ms = (double)x->ns / 1e6 / per_a, b_ms = (double)y->ns / 1e6 / per_b;
    return json_pack("{s:f, s:f, s:f, s:f, s:f}", "a_ms", a_ms, "b_ms", b_ms, "change_ms",
                     b_ms - a_ms, "a_calls", (double)x->count / per_a, "b_calls",
                     (double)y->count / per_b);
}

/* GPU busy time on both sides (null when either is not known). */
static json_t *
busy_row(const struct rs_profile *a, double per_a, const struct rs_profile *b, double per_b)
{
    if (!a->busy_known || !b->busy_known)
        return json_null();
    double a_ms = (double)a->busy_ns / 1e6 / per_a, b_ms = (double)b->busy_ns / 1e6 / per_b;
    return json_pack("{s:f, s:f, s:f}", "a_ms", a_ms, "b_ms", b_ms, "change_ms", b_ms - a_ms);
}

/* x with its sign at `decimals` decimals, or "0.00" (no sign) when it rounds to zero there: no
 * "-0.0%" in summaries. */
static const char *
signed_text(double x, int decimals, char *out, size_t len)
{
    double unit = 0.5;
    for (int i = 0; i < decimals; i++)
        unit /= 10;
    snprintf(out, len, fabs(x) < unit ? "%.*f" : "%+.*f", decimals, fabs(x) < unit ? 0.0 : x);
    return out;
}

static const char *
kind_name(enum rs_profile_kind k)
{
    return k == RS_PROFILE_KERNEL ? "kernel" : "nccl";
}

int
rs_query_compare(rs_store_read *r, const struct rs_profile_scope *a,
                 const struct rs_profile_scope *b, size_t limit, char *side, json_t **out)
{
    struct rs_profile pa, pb;
    struct row *rows = NULL;
    size_t n = 0;
    const char *unit_a, *unit_b;
    json_t *list = NULL;
    int rc;

    if ((rc = rs_profile_build(r, a, &pa)) != 0) {
        *side = 'a';
        return rc;
    }
    if ((rc = rs_profile_build(r, b, &pb)) != 0) {
        *side = 'b';
        rs_profile_fini(&pa);
        return rc;
    }
    double per_a = rs_profile_divisor(&pa, &unit_a), per_b = rs_profile_divisor(&pb, &unit_b);
    if ((rc = align(&pa, per_a, &pb, per_b, &rows, &n)) != 0 || !(list = json_array())) {
        rc = rc ? rc : -ENOMEM;
        goto out;
    }
    qsort(rows, n, sizeof *rows, by_change_desc);
    double total_a = 0, total_b = 0, other_a = 0, other_b = 0;
    for (size_t i = 0; i < n; i++) {
        const struct row *w = &rows[i];
        total_a += w->a_ms;
        total_b += w->b_ms;
        if (i >= limit) {
            other_a += w->a_ms;
            other_b += w->b_ms;
            continue;
        }
        json_array_append_new(
            list,
            json_pack("{s:s, s:s, s:f, s:f, s:f, s:o, s:f, s:f}", "name", w->name, "kind",
                      kind_name(w->kind), "a_ms", w->a_ms, "b_ms", w->b_ms, "change_ms",
                      w->b_ms - w->a_ms, "change_pct",
                      w->a_ms > 0 ? json_real(100.0 * (w->b_ms - w->a_ms) / w->a_ms) : json_null(),
                      "a_calls", w->a_calls, "b_calls", w->b_calls));
    }
    char summary[512];
    if (n == 0)
        snprintf(summary, sizeof summary, "neither side has kernel records");
    else if (rows[0].b_ms == rows[0].a_ms)
        snprintf(summary, sizeof summary, "no change: %.3f ms of GPU time %s on both sides",
                 total_a, strcmp(unit_a, "per_step") == 0 ? "per step" : "per second");
    else {
        char d_ms[32], d_pct[32], top_ms[32];
        snprintf(summary, sizeof summary,
                 "B: %s ms (%s%%) of GPU time %s against A; largest change: %s %.60s (%s ms)",
                 signed_text(total_b - total_a, 2, d_ms, sizeof d_ms),
                 signed_text(total_a > 0 ? 100.0 * (total_b - total_a) / total_a : 0.0, 1, d_pct,
                             sizeof d_pct),
                 strcmp(unit_a, "per_step") == 0 ? "per step" : "per second",
                 kind_name(rows[0].kind), rows[0].name,
                 signed_text(rows[0].b_ms - rows[0].a_ms, 2, top_ms, sizeof top_ms));
    }
    *out = json_pack("{s:o, s:o, s:s, s:s, s:{s:f, s:f, s:f}, s:o, s:{s:I, s:f, s:f, s:f}, "
                     "s:o, s:o?, s:o?, s:o?}",
                     "a", rs_profile_scope_json(a, &pa), "b", rs_profile_scope_json(b, &pb), "unit",
                     strcmp(unit_a, unit_b) == 0 ? unit_a : "mixed", "summary", summary, "total",
                     "a_ms", total_a, "b_ms", total_b, "change_ms", total_b - total_a, "items",
                     list, "other", "items", (json_int_t)(n > limit ? n - limit : 0), "a_ms",
                     other_a, "b_ms", other_b, "change_ms", other_b - other_a, "stall_mix",
                     stall_mix(&pa, &pb), "host_sync", sync_rows(&pa, per_a, &pb, per_b),
                     "launch_wait", launch_wait_row(&pa, per_a, &pb, per_b), "gpu_busy",
                     busy_row(&pa, per_a, &pb, per_b));
    list = NULL;
    rc = *out ? 0 : -ENOMEM;
out:
    json_decref(list);
    free(rows);
    rs_profile_fini(&pa);
    rs_profile_fini(&pb);
    return rc;
}
