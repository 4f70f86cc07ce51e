/* pprof export (see pprof_export.h): one pass over the scope's stall records, and when the time
 * profile is wanted, one over its kernels and one over the job's collectives, fed into a pprof
 * builder that merges equal stacks. */
#include "query/pprof_export.h"

#include "common/error.h"
#include "common/span.h"
#include "proto/pprof.h"
#include "proto/wire.h"
#include "query/profile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Cubin PC offsets fit in 32 bits: every cubin mapping spans [0, 4 GiB). */
#define CUBIN_LIMIT (1ull << 32)

struct export
{
    rs_pprof *prof;
    const struct rs_pprof_export_options *o;
    uint64_t until;                  /* o->until_ns, or open */
    const struct rs_rank_info *rank; /* the rank being scanned (stalls, kernels) */
    uint64_t rank_location;          /* its frame */
    bool rank_has_data;
    uint64_t t0, t1; /* earliest start, latest end seen */
    struct rs_pprof_export_stats *st;
};

static bool
in_range(const struct export *x, uint64_t start_ns)
{
    return start_ns >= x->o->since_ns && start_ns < x->until;
}

static void
cover(struct export *x, uint64_t start_ns, uint64_t end_ns)
{
    rs_span_cover(&x->t0, &x->t1, start_ns, end_ns);
    x->rank_has_data = true;
}

static int
rank_frame(struct export *x, const struct rs_rank_info *ri, uint64_t *location)
{
    char name[32];
    snprintf(name, sizeof name, "rank %" PRIu32, ri->rank);
    return rs_pprof_frame(x->prof, name, 0, 0, location);
}

/* Adds `values` to the stack (leaf first) of rank `ri`, labelled with its rank and host. */
static int
add(struct export *x, const struct rs_rank_info *ri, const uint64_t *stack, size_t depth,
    const int64_t *values)
{
    struct rs_pprof_label labels[2] = {{"rank", NULL, ri->rank, NULL},
                                       {"host", ri->host[0] ? ri->host : "unknown", 0, NULL}};
    return rs_pprof_add(x->prof, stack, depth, values, labels, 2);
}

static int
on_stall(void *arg, const struct rs_stall_record *s, uint64_t at_ns, const char *kernel,
         const char *reason)
{
    struct export *x = arg;
    uint64_t stack[4], mapping = 0;
    char pc[32 + RS_WIRE_MAX_STRING_LEN];
    int rc;

    if (s->count == 0)
        return 0;
    if (s->cubin_crc) {
        char file[32], build_id[16];
        snprintf(file, sizeof file, "cubin-%08" PRIx32, s->cubin_crc);
        snprintf(build_id, sizeof build_id, "%08" PRIx32, s->cubin_crc);
        if ((rc = rs_pprof_add_mapping(x->prof, file, build_id, CUBIN_LIMIT, &mapping)) != 0)
            return rc;
    }
    snprintf(pc, sizeof pc, "%s+0x%" PRIx64, kernel, s->pc_offset);
    if ((rc = rs_pprof_frame(x->prof, rs_profile_reason_short(reason), 0, 0, &stack[0])) != 0 ||
        (rc = rs_pprof_frame(x->prof, pc, mapping, s->pc_offset, &stack[1])) != 0 ||
        (rc = rs_pprof_frame(x->prof, kernel, 0, 0, &stack[2])) != 0)
        return rc;
    stack[3] = x->rank_location;
    int64_t v = (int64_t)(s->count > INT64_MAX ? INT64_MAX : s->count);
    if ((rc = add(x, x->rank, stack, 4, &v)) != 0)
        return rc;
    x->st->events += s->count;
    cover(x, at_ns, at_ns);
    return 0;
}

/* Adds `count` launches taking `ns` to the time profile's stack [leaf, the current rank], and
 * marks [t0, t1) as covered. */
static int
add_time(struct export *x, const char *leaf, uint64_t count, uint64_t ns, uint64_t t0, uint64_t t1)
{
    uint64_t stack[2];
    int64_t v[2] = {(int64_t)count, (int64_t)ns};
    int rc;

    if ((rc = rs_pprof_frame(x->prof, leaf, 0, 0, &stack[0])) != 0)
        return rc;
    stack[1] = x->rank_location;
    if ((rc = add(x, x->rank, stack, 2, v)) != 0)
        return rc;
    x->st->events += count;
    x->st->gpu_ns += ns;
    cover(x, t0, t1);
    return 0;
}

static int
on_kernel(void *arg, const struct rs_kernel_record *k, const char *name, uint64_t name_hash)
{
    struct export *x = arg;

    (void)name_hash;
    if (!in_range(x, k->start_ns))
        return 0;
    return add_time(x, name, 1, k->end_ns - k->start_ns, k->start_ns, k->end_ns);
}

/* Rolled-up kernels and copies (storage "Rollups"): a window counts when it starts in the range. */
static int
on_kernel_window(void *arg, const struct rs_kernel_window *kw, const char *name, uint64_t name_hash)
{
    struct export *x = arg;

    (void)name_hash;
    if (!in_range(x, kw->start_ns))
        return 0;
    return add_time(x, name, kw->count, kw->total_ns, kw->start_ns, kw->start_ns + kw->window_ns);
}

static int
on_copy(void *arg, const struct rs_memcpy_record *m)
{
    struct export *x = arg;

    if (!in_range(x, m->start_ns) || rs_copy_kind_is_host_side(m->kind)) /* host time, not GPU */
        return 0;
    return add_time(x, rs_copy_kind_name(m->kind), 1, m->end_ns - m->start_ns, m->start_ns,
                    m->end_ns);
}

static int
on_copy_window(void *arg, const struct rs_copy_window *cw)
{
    struct export *x = arg;

    if (!in_range(x, cw->start_ns) || rs_copy_kind_is_host_side(cw->kind))
        return 0;
    return add_time(x, rs_copy_kind_name(cw->kind), cw->count, cw->total_ns, cw->start_ns,
                    cw->start_ns + cw->window_ns);
}

/* Collectives come for every rank of the job at once: the scope's ranks, sorted by rank. */
struct collective_pass {
    struct export *x;
    const struct rs_rank_info *ranks;
    size_t n_ranks;
    bool *has_data;      /* per entry of ranks[] */
    uint64_t *locations; /* per entry of ranks[]: its frame */
};

static int
on_collective(void *arg, uint32_t rank, const struct rs_collective_record *c)
{
    struct collective_pass *cp = arg;
    struct export *x = cp->x;
    size_t lo = 0, hi = cp->n_ranks;
    char name[48];

    if (!in_range(x, c->start_ns))
        return 0;
    while (lo < hi) { /* ranks[] is in rank order */
        size_t mid = lo + (hi - lo) / 2;
        if (cp->ranks[mid].rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == cp->n_ranks || cp->ranks[lo].rank != rank)
        return 0; /* not in the scope */
    x->rank = &cp->ranks[lo];
    x->rank_location = cp->locations[lo];
    cp->has_data[lo] = true;
    snprintf(name, sizeof name, "NCCL %s", rs_coll_op_name(c->op));
    return add_time(x, name, 1, c->end_ns - c->start_ns, c->start_ns, c->end_ns);
}

static int
describe(struct export *x, const char *what)
{
    char text[256];
    int rc;

    rs_pprof_set_time(x->prof, x->t0, x->t1 > x->t0 ? x->t1 - x->t0 : 0);
    snprintf(text, sizeof text, "rankscope: job %s, %s, %" PRIu32 " rank%s", x->o->job, what,
             x->st->ranks, x->st->ranks == 1 ? "" : "s");
    if ((rc = rs_pprof_add_comment(x->prof, text)) != 0)
        return rc;
    if (x->o->since_ns == 0 && x->o->until_ns == 0)
        snprintf(text, sizeof text, "window: the whole job");
    else if (x->o->until_ns == 0)
        snprintf(text, sizeof text, "window: records that start at or after %" PRIu64 " ns",
                 x->o->since_ns);
    else
        snprintf(text, sizeof text,
                 "window: records that start in [%" PRIu64 ", %" PRIu64 ") ns (since the epoch)",
                 x->o->since_ns, x->o->until_ns);
    return rs_pprof_add_comment(x->prof, text);
}

/* The scope's ranks (those asked for), in rank order. */
static int
scope_ranks(rs_store_read *r, const struct rs_pprof_export_options *o, struct rs_rank_info **out,
            size_t *n)
{
    size_t kept = 0;
    int rc = rs_store_ranks_get(r, o->job, out, n);

    if (rc != 0 || o->rank == RS_PROFILE_ALL_RANKS)
        return rc;
    for (size_t i = 0; i < *n; i++)
        if ((*out)[i].rank == o->rank)
            (*out)[kept++] = (*out)[i];
    *n = kept;
    return 0;
}

static int
build_stalls(rs_store_read *r, struct export *x, const struct rs_rank_info *ranks, size_t n)
{
    int rc;

    if ((rc = rs_pprof_add_sample_type(x->prof, "samples", "count")) != 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        x->rank = &ranks[i];
        x->rank_has_data = false;
        if ((rc = rank_frame(x, &ranks[i], &x->rank_location)) != 0 ||
            (rc = rs_store_stalls_scan(r, x->o->job, ranks[i].rank, x->o->since_ns, x->until,
                                       on_stall, x)) != 0)
            return rc;
        x->st->ranks += x->rank_has_data;
    }
    return 0;
}

static int
build_time(rs_store_read *r, struct export *x, const struct rs_rank_info *ranks, size_t n)
{
    struct collective_pass cp = {x, ranks, n, calloc(n ? n : 1, sizeof(bool)),
                                 calloc(n ? n : 1, sizeof(uint64_t))};
    int rc = -ENOMEM;

    if (!cp.has_data || !cp.locations)
        goto out;
    if ((rc = rs_pprof_add_sample_type(x->prof, "launches", "count")) != 0 ||
        (rc = rs_pprof_add_sample_type(x->prof, "gpu_time", "nanoseconds")) != 0 ||
        (rc = rs_pprof_set_default_sample_type(x->prof, "gpu_time")) != 0)
        goto out;
    for (size_t i = 0; i < n; i++) {
        x->rank = &ranks[i];
        x->rank_has_data = false;
        if ((rc = rank_frame(x, &ranks[i], &x->rank_location)) != 0 ||
            (rc = rs_store_kernels_scan(r, x->o->job, ranks[i].rank,
                                        rs_store_kernel_scan_from(x->o->since_ns), x->until,
                                        on_kernel, x)) != 0 ||
            (rc = rs_store_kernel_windows_scan(r, x->o->job, ranks[i].rank, x->o->since_ns,
                                               x->until, on_kernel_window, x)) != 0 ||
            (rc = rs_store_memcpys_scan(r, x->o->job, ranks[i].rank,
                                        rs_store_kernel_scan_from(x->o->since_ns), x->until,
                                        on_copy, x)) != 0 ||
            (rc = rs_store_copy_windows_scan(r, x->o->job, ranks[i].rank, x->o->since_ns, x->until,
                                             on_copy_window, x)) != 0)
            goto out;
        cp.has_data[i] = x->rank_has_data;
        cp.locations[i] = x->rank_location;
    }
    if ((rc = rs_store_collectives_scan_range(r, x->o->job, x->o->since_ns, x->until, on_collective,
                                              &cp)) != 0)
        goto out;
    for (size_t i = 0; i < n; i++)
        x->st->ranks += cp.has_data[i];
out:
    free(cp.has_data);
    free(cp.locations);
    return rc;
}

/* Builds the profile `which` (STALLS or TIME) into a fresh builder in x->prof. */
static int
build(rs_store_read *r, struct export *x, enum rs_pprof_profile which,
      const struct rs_rank_info *ranks, size_t n)
{
    int rc;

    rs_pprof_free(x->prof);
    x->prof = NULL;
    memset(x->st, 0, sizeof *x->st);
    x->st->profile = which;
    x->t0 = x->t1 = 0;
    if ((rc = rs_pprof_new(&x->prof)) != 0)
        return rc;
    /* pprof readers show the first mapping as the profile's "main binary": name the job there,
     * not the first cubin */
    char main_name[32 + RS_WIRE_MAX_JOB_LEN];
    uint64_t main_id;
    snprintf(main_name, sizeof main_name, "rankscope job %s", x->o->job);
    if ((rc = rs_pprof_add_mapping(x->prof, main_name, "", 1, &main_id)) != 0)
        return rc;
    return which == RS_PPROF_STALLS ? build_stalls(r, x, ranks, n) : build_time(r, x, ranks, n);
}

int
rs_pprof_export(rs_store_read *r, const struct rs_pprof_export_options *o, uint8_t **out,
                size_t *len, struct rs_pprof_export_stats *stats)
{
    struct rs_pprof_export_stats st;
    struct export x = {NULL, o, o->until_ns ? o->until_ns : UINT64_MAX, NULL, 0, false, 0, 0, &st};
    struct rs_rank_info *ranks = NULL;
    size_t n = 0;
    int rc;

    if ((rc = scope_ranks(r, o, &ranks, &n)) != 0)
        goto out;
    if (n == 0) { /* the job exists, the rank asked for does not */
        rc = RS_E_NOT_FOUND;
        goto out;
    }
    if (o->profile != RS_PPROF_TIME) {
        if ((rc = build(r, &x, RS_PPROF_STALLS, ranks, n)) != 0)
            goto out;
        if (st.events == 0 && o->profile == RS_PPROF_STALLS) {
            rc = -ENODATA;
            goto out;
        }
    }
    if (o->profile == RS_PPROF_TIME || st.events == 0) {
        if ((rc = build(r, &x, RS_PPROF_TIME, ranks, n)) != 0)
            goto out;
        if (st.ranks == 0 && o->rank != RS_PROFILE_ALL_RANKS) {
            rc = RS_E_NOT_FOUND;
            goto out;
        }
    }
    if ((rc = describe(&x, st.profile == RS_PPROF_STALLS ? "PC-sampling stall reasons"
                                                         : "GPU time per kernel")) != 0)
        goto out;
    st.stacks = rs_pprof_samples(x.prof);
    if ((rc = rs_pprof_encode_until(x.prof, o->deadline_ns, out, len)) != 0)
        goto out;
    *stats = st;
out:
    rs_pprof_free(x.prof);
    free(ranks);
    return rc;
}

const char *
rs_pprof_profile_name(enum rs_pprof_profile p)
{
    switch (p) {
    case RS_PPROF_STALLS:
        return "stalls";
    case RS_PPROF_TIME:
        return "time";
    case RS_PPROF_AUTO:
        break;
    }
    return "auto";
}
