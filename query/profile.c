/* Building a scope's profile from its records (see profile.h). */
#include "query/profile.h"
#include "query/profile_int.h"

#include "common/array.h"
#include "common/pos_index.h"
#include "query/step_infer.h"

#include "common/error.h"
#include "common/hash.h"
#include "common/span.h"
#include "common/step_metrics.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define REASON_PREFIX "smsp__pcsamp_warps_issue_stalled_"

static uint64_t
key_hash(const char *a, const char *b, unsigned kind)
{
    uint64_t h = rs_hash_fnv1a64(a, strlen(a)) ^ (kind * 0x9e3779b97f4a7c15ull);
    return b ? h ^ (rs_hash_fnv1a64(b, strlen(b)) * 31) : h;
}

static uint64_t
item_hash(const void *e)
{
    const struct rs_profile_item *it = e;
    return key_hash(it->name, NULL, it->kind);
}

static uint64_t
stall_hash(const void *e)
{
    const struct rs_profile_stall *st = e;
    return key_hash(st->kernel, st->reason, 0);
}

const struct rs_profile_item *
rs_profile_find(const struct rs_profile *p, enum rs_profile_kind kind, const char *name)
{
    if (!p->item_slots)
        return NULL;
    for (size_t s = key_hash(name, NULL, kind) & (p->item_slots - 1); p->item_index[s];
         s = (s + 1) & (p->item_slots - 1)) {
        const struct rs_profile_item *it = &p->items[p->item_index[s] - 1];
        if (it->kind == kind && strcmp(it->name, name) == 0)
            return it;
    }
    return NULL;
}

struct rs_profile_item *
rs__profile_item_get(struct rs_profile *p, enum rs_profile_kind kind, const char *name)
{
    struct rs_profile_item *it = (struct rs_profile_item *)rs_profile_find(p, kind, name);

    if (it)
        return it;
    if (rs_pos_index_grow(&p->item_index, &p->item_slots, p->n_items, p->items, sizeof *p->items,
                          item_hash) != 0 ||
        RS_ARRAY_RESERVE(p->items, p->cap_items, p->n_items, 1) != 0)
        return NULL;
    it = &p->items[p->n_items];
    if (!(it->name = strdup(name)))
        return NULL;
    it->kind = kind;
    it->count = it->ns = it->stall_samples = 0;
    rs_pos_index_put(p->item_index, p->item_slots, item_hash(it), (uint32_t)++p->n_items);
    return it;
}

static struct rs_profile_stall *
stall_get(struct rs_profile *p, const char *kernel, const char *reason)
{
    struct rs_profile_stall *st;

    if (p->stall_slots)
        for (size_t s = key_hash(kernel, reason, 0) & (p->stall_slots - 1); p->stall_index[s];
             s = (s + 1) & (p->stall_slots - 1)) {
            st = &p->stalls[p->stall_index[s] - 1];
            if (strcmp(st->kernel, kernel) == 0 && strcmp(st->reason, reason) == 0)
                return st;
        }
    if (rs_pos_index_grow(&p->stall_index, &p->stall_slots, p->n_stalls, p->stalls,
                          sizeof *p->stalls, stall_hash) != 0 ||
        RS_ARRAY_RESERVE(p->stalls, p->cap_stalls, p->n_stalls, 1) != 0)
        return NULL;
    st = &p->stalls[p->n_stalls];
    st->kernel = strdup(kernel);
    st->reason = strdup(reason);
    st->samples = 0;
    if (!st->kernel || !st->reason) {
        free(st->kernel);
        free(st->reason);
        return NULL;
    }
    rs_pos_index_put(p->stall_index, p->stall_slots, stall_hash(st), (uint32_t)++p->n_stalls);
    return st;
}

/* A collective record of the range with its rank (for busy time and step inference). */
struct coll {
    uint32_t rank;
    struct rs_collective_record c;
    bool deferred; /* of a rank tracing in windows: counted only if within its traced spans */
};

/* The union of one rank's GPU intervals. The store returns a rank's kernels chunk by chunk in time
 * order, but not sorted within a chunk, and a chunk's records reach at most
 * RS_STORE_KERNEL_MARGIN_NS past its first: so intervals are buffered, and from time to time the
 * runs of overlapping intervals that end that far before the latest kernel start seen are final —
 * counted and dropped. Memory: about a margin's worth of intervals. An interval that still comes
 * before the counted part (against that contract) is counted only past it. */
#define BUSY_COMPACT_MIN (1u << 20)

struct busy {
    struct rs_intervals iv;
    uint64_t total;      /* length of the final runs */
    uint64_t counted_to; /* the end of the last final run */
    uint64_t max_start;  /* of the kernels seen */
    size_t compact_at;   /* buffer size that triggers the next compaction */
};

/* Counts and drops the runs that end by `upto`. */
static void
busy_compact(struct busy *u, uint64_t upto)
{
    size_t i = 0, keep = 0;

    rs_intervals_sort(&u->iv);
    while (i < u->iv.n) {
        size_t first = i;
        uint64_t rs = u->iv.v[i].start_ns, re = u->iv.v[i].end_ns;
        for (i++; i < u->iv.n && u->iv.v[i].start_ns <= re; i++)
            re = u->iv.v[i].end_ns > re ? u->iv.v[i].end_ns : re;
        if (re > upto) {
            keep = first;
            break;
        }
        u->total += re - rs;
        u->counted_to = re;
        keep = i;
    }
    if (keep > 0) /* (nothing counted yet: iv.v may be NULL, which memmove must not get) */
        memmove(u->iv.v, u->iv.v + keep, (u->iv.n - keep) * sizeof *u->iv.v);
    u->iv.n -= keep;
    u->compact_at = 2 * u->iv.n > BUSY_COMPACT_MIN ? 2 * u->iv.n : BUSY_COMPACT_MIN;
}

static int
busy_add(struct busy *u, uint64_t s, uint64_t e, bool kernel)
{
    if (s < u->counted_to)
        s = u->counted_to;
    if (e <= s)
        return 0;
    if (rs_intervals_add(&u->iv, s, e, false) != 0)
        return -ENOMEM;
    if (kernel && s > u->max_start)
        u->max_start = s;
    if (u->iv.n >= u->compact_at && u->max_start > RS_STORE_KERNEL_MARGIN_NS)
        busy_compact(u, u->max_start - RS_STORE_KERNEL_MARGIN_NS);
    return 0;
}

/* The union of everything added; empties the buffer. */
static uint64_t
busy_total(struct busy *u)
{
    busy_compact(u, UINT64_MAX);
    return u->total;
}

struct build {
    struct rs_profile *p;
    const struct rs_profile_scope *scope;
    uint64_t until;
    bool rank_has_data;
    /* the collectives of the range, by (rank, start) */
    struct coll *colls;
    size_t n_colls, cap_colls;
    bool too_many_colls;
    struct busy busy;
    struct busy lw; /* the current rank's launch waits: their union (see scan_host_side) */
    bool has_step_records;
    /* the current rank traces kernels in windows: the spans its kernels cover (start, end pairs,
     * merged across gaps shorter than RS_PROFILE_TRACED_GAP_NS) */
    bool sampled;
    uint64_t *traced;
    size_t n_traced, cap_traced; /* pairs */
    const struct rs_rank_info *ranks; /* the job's, in rank order */
    size_t n_ranks;
};

#define MAX_TRACED_SPANS 1000000 /* beyond (kernels far out of order): every step counts */

/* Notes that the current sampled rank's kernels cover [s, e). */
static int
traced_add(struct build *b, uint64_t s, uint64_t e)
{
    uint64_t *last = b->n_traced ? &b->traced[2 * (b->n_traced - 1)] : NULL;

    if (!b->sampled || b->n_traced > MAX_TRACED_SPANS)
        return 0;
    if (last && s >= last[0] && s <= last[1] + RS_PROFILE_TRACED_GAP_NS) {
        if (e > last[1])
            last[1] = e;
        return 0;
    }
    if (b->n_traced == b->cap_traced) {
        size_t cap = b->cap_traced ? 2 * b->cap_traced : 64;
        uint64_t *v = realloc(b->traced, cap * 2 * sizeof *v);
        if (!v)
            return -ENOMEM;
        b->traced = v;
        b->cap_traced = cap;
    }
    b->traced[2 * b->n_traced] = s;
    b->traced[2 * b->n_traced + 1] = e;
    b->n_traced++;
    return 0;
}

static int
by_span_start(const void *x, const void *y)
{
    const uint64_t *a = x, *b = y;
    return (a[0] > b[0]) - (a[0] < b[0]);
}

/* Sorts the spans and merges those that overlap (kernels out of order made several). */
static void
traced_settle(struct build *b)
{
    size_t n = 0;

    if (!b->n_traced || b->n_traced > MAX_TRACED_SPANS)
        return;
    qsort(b->traced, b->n_traced, 2 * sizeof *b->traced, by_span_start);
    for (size_t i = 1; i < b->n_traced; i++) {
        uint64_t *cur = &b->traced[2 * n], *next = &b->traced[2 * i];
        if (next[0] <= cur[1]) {
            if (next[1] > cur[1])
                cur[1] = next[1];
        } else {
            n++;
            b->traced[2 * n] = next[0];
            b->traced[2 * n + 1] = next[1];
        }
    }
    b->n_traced = n + 1;
}

/* Whether [s, e) meets a traced span (traced_settle: sorted, disjoint). */
static bool
traced(const struct build *b, uint64_t s, uint64_t e)
{
    size_t lo = 0, hi = b->n_traced;

    if (b->n_traced > MAX_TRACED_SPANS)
        return true;
    while (lo < hi) { /* the first span starting at or after e */
        size_t mid = (lo + hi) / 2;
        if (b->traced[2 * mid] < e)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && b->traced[2 * (lo - 1) + 1] > s;
}

static bool
in_range(const struct build *b, uint64_t start_ns)
{
    return start_ns >= b->scope->since_ns && start_ns < b->until;
}

static void
cover(struct build *b, uint64_t start_ns, uint64_t end_ns)
{
    struct rs_profile *p = b->p;
    rs_span_cover(&p->t0, &p->t1, start_ns, end_ns);
    b->rank_has_data = true;
}

static int
on_kernel(void *arg, const struct rs_kernel_record *k, const char *name, uint64_t name_hash)
{
    struct build *b = arg;
    struct rs_profile_item *it;

    if (!in_range(b, k->start_ns))
        return 0;
    if (!(it = rs__profile_item_get(b->p, RS_PROFILE_KERNEL, name)))
        return -ENOMEM;
    it->count++;
    it->ns += k->end_ns - k->start_ns;
    cover(b, k->start_ns, k->end_ns);
    rs_span_cover(&b->p->timed_t0, &b->p->timed_t1, k->start_ns, k->end_ns);
    if (traced_add(b, k->start_ns, k->end_ns) != 0)
        return -ENOMEM;
    return busy_add(&b->busy, k->start_ns, k->end_ns, true);
}

/* Rolled-up kernels: a window counts when it starts in the range. */
static int
on_kernel_window(void *arg, const struct rs_kernel_window *kw, const char *name, uint64_t name_hash)
{
    struct build *b = arg;
    struct rs_profile_item *it;

    (void)name_hash;
    if (!in_range(b, kw->start_ns))
        return 0;
    if (!(it = rs__profile_item_get(b->p, RS_PROFILE_KERNEL, name)))
        return -ENOMEM;
    it->count += kw->count;
    it->ns += kw->total_ns;
    cover(b, kw->start_ns, kw->start_ns + kw->window_ns);
    b->p->busy_known = false; /* totals without intervals */
    return traced_add(b, kw->start_ns, kw->start_ns + kw->window_ns);
}

static int
count_collective(struct build *b, const struct rs_collective_record *c)
{
    struct rs_profile_item *it = rs__profile_item_get(b->p, RS_PROFILE_COLLECTIVE, rs_coll_op_name(c->op));

    if (!it)
        return -ENOMEM;
    it->count++;
    it->ns += c->end_ns - c->start_ns;
    rs_span_cover(&b->p->t0, &b->p->t1, c->start_ns, c->end_ns);
    rs_span_cover(&b->p->timed_t0, &b->p->timed_t1, c->start_ns, c->end_ns);
    return 0;
}

/* Whether `rank` traces kernels in windows (b->ranks is in rank order). */
static bool
rank_sampled(const struct build *b, uint32_t rank)
{
    size_t lo = 0, hi = b->n_ranks;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (b->ranks[mid].rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < b->n_ranks && b->ranks[lo].rank == rank &&
           (b->ranks[lo].collector_flags & RS_COLLECTOR_KERNELS_SAMPLED);
}

static int
on_collective(void *arg, uint32_t rank, const struct rs_collective_record *c)
{
    struct build *b = arg;
    /* a rank tracing in windows: its collectives (the NCCL plugin's are always there) count
     * with its kernels, within its traced spans, once they are known — unless there are too
     * many to keep, then all of them */
    bool defer = rank_sampled(b, rank) && b->n_colls < RS_PROFILE_MAX_COLLECTIVES;

    if (!rs_profile_scope_has(b->scope, rank) || !in_range(b, c->start_ns))
        return 0;
    if (!defer && count_collective(b, c) != 0)
        return -ENOMEM;
    if (b->n_colls == RS_PROFILE_MAX_COLLECTIVES) {
        b->too_many_colls = true;
        return 0;
    }
    if (RS_ARRAY_RESERVE(b->colls, b->cap_colls, b->n_colls, 1) != 0)
        return -ENOMEM;
    b->colls[b->n_colls++] = (struct coll){rank, *c, defer};
    return 0;
}

/* The current rank's deferred collectives that meet its traced spans. */
static int
count_traced_collectives(struct build *b, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        if (b->colls[i].deferred && traced(b, b->colls[i].c.start_ns, b->colls[i].c.end_ns + 1) &&
            count_collective(b, &b->colls[i].c) != 0)
            return -ENOMEM;
    return 0;
}

static int
by_rank_start(const void *x, const void *y)
{
    const struct coll *a = x, *b = y;
    if (a->rank != b->rank)
        return (a->rank > b->rank) - (a->rank < b->rank);
    return (a->c.start_ns > b->c.start_ns) - (a->c.start_ns < b->c.start_ns);
}

/* A rank without step records: its steps inferred from its collectives of the range
 * (colls[from, to), in start order), counted when they start in the range. */
static int
count_inferred_steps(struct build *b, size_t from, size_t to)
{
    struct rs_collective_record *v = malloc((to - from ? to - from : 1) * sizeof *v);
    struct rs_step_record *steps = NULL;
    size_t n = 0;
    uint32_t period;
    int rc;

    if (!v)
        return -ENOMEM;
    for (size_t i = from; i < to; i++)
        v[i - from] = b->colls[i].c;
    rc = rs_infer_steps(v, to - from, &steps, &n, &period);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (in_range(b, steps[i].start_ns))
            b->p->inferred_rank_steps++;
    free(steps);
    free(v);
    return rc;
}

/* Host synchronizations (copies and memsets are not in the profile). */
static int
on_sync(void *arg, const struct rs_memcpy_record *m)
{
    struct build *b = arg;

    if (!in_range(b, m->start_ns))
        return 0;
    /* copies, memsets and host-side records all widen the span: a launch wait ends at GPU work,
     * which may be a copy, and may begin long before the first kernel (a job's start-up) */
    rs_span_cover(&b->p->t0, &b->p->t1, m->start_ns, m->end_ns);
    if (m->kind == RS_LAUNCH_WAIT) { /* time: the union, in scan_host_side */
        b->p->syncs[m->kind].count++;
        return busy_add(&b->lw, m->start_ns, m->end_ns, true);
    }
    if (rs_copy_kind_is_host_side(m->kind)) {
        b->p->syncs[m->kind].count++;
        b->p->syncs[m->kind].ns += m->end_ns - m->start_ns;
    }
    return 0;
}

static int
on_sync_window(void *arg, const struct rs_copy_window *cw)
{
    struct build *b = arg;

    if (!in_range(b, cw->start_ns))
        return 0;
    rs_span_cover(&b->p->t0, &b->p->t1, cw->start_ns, cw->start_ns + cw->window_ns);
    if (rs_copy_kind_is_host_side(cw->kind)) {
        b->p->syncs[cw->kind].count += cw->count;
        b->p->syncs[cw->kind].ns += cw->total_ns;
    }
    return 0;
}

static int
on_step(void *arg, const struct rs_step_record *s)
{
    struct build *b = arg;

    b->has_step_records = true;
    if (!in_range(b, s->start_ns))
        return 0;
    if (b->sampled && !traced(b, s->start_ns, s->end_ns > s->start_ns ? s->end_ns : s->start_ns + 1))
        b->p->untraced_rank_steps++;
    else
        b->p->rank_steps++;
    return 0;
}

static int
on_stall(void *arg, const struct rs_stall_record *s, uint64_t at_ns, const char *kernel,
         const char *reason)
{
    struct build *b = arg;
    struct rs_profile_stall *st;

    (void)at_ns;
    if (!(st = stall_get(b->p, kernel, rs_profile_reason_short(reason))))
        return -ENOMEM;
    st->samples += s->count;
    b->p->stall_samples += s->count;
    return 0;
}

const char *
rs_profile_reason_short(const char *reason)
{
    size_t plen = sizeof REASON_PREFIX - 1;
    return strncmp(reason, REASON_PREFIX, plen) == 0 && reason[plen] ? reason + plen : reason;
}

/* One rank's host-side records (syncs and launch waits, records and window totals) into b. A
 * rank's launch waits count by their union: one collector's never overlap (it sweeps each device's
 * timeline once), but several processes can send as one rank — a process without RANK is rank 0
 * of its job, as are, say, compile or autotune workers that inherit RANKSCOPE_JOB_ID — and their
 * waits, each on its own timeline, would otherwise add up to more than the wall time. */
static int
scan_host_side(rs_store_read *r, struct build *b, uint32_t rank, uint64_t from)
{
    int rc;

    rs_intervals_clear(&b->lw.iv);
    b->lw = (struct busy){b->lw.iv, 0, 0, 0, BUSY_COMPACT_MIN};
    rc = rs_store_memcpys_scan(r, b->scope->job, rank, from, b->until, on_sync, b);
    if (rc == 0)
        rc = rs_store_copy_windows_scan(r, b->scope->job, rank, b->scope->since_ns, b->until,
                                        on_sync_window, b);
    if (rc == 0)
        b->p->syncs[RS_LAUNCH_WAIT].ns += busy_total(&b->lw);
    return rc;
}

int
rs_profile_host_side(rs_store_read *r, const struct rs_profile_scope *scope,
                     struct rs_profile_sync out[RS_COPY_KIND_COUNT])
{
    struct rs_rank_info *ranks = NULL;
    size_t n_ranks = 0;
    struct rs_profile p;
    struct build b = {
        .p = &p, .scope = scope, .until = scope->until_ns ? scope->until_ns : UINT64_MAX};
    uint64_t from = rs_store_kernel_scan_from(scope->since_ns);
    int rc;

    memset(&p, 0, sizeof p);
    if ((rc = rs_store_ranks_get(r, scope->job, &ranks, &n_ranks)) != 0)
        goto out;
    for (size_t i = 0; i < n_ranks && rc == 0; i++)
        if (rs_profile_scope_has(scope, ranks[i].rank))
            rc = scan_host_side(r, &b, ranks[i].rank, from);
    if (rc == 0)
        memcpy(out, p.syncs, sizeof p.syncs);
out:
    free(ranks);
    rs_intervals_fini(&b.lw.iv);
    return rc;
}

int
rs_profile_build(rs_store_read *r, const struct rs_profile_scope *scope, struct rs_profile *out)
{
    struct rs_rank_info *ranks = NULL;
    size_t n_ranks = 0;
    struct build b = {
        .p = out, .scope = scope, .until = scope->until_ns ? scope->until_ns : UINT64_MAX};
    uint64_t from = rs_store_kernel_scan_from(scope->since_ns);
    int rc;

    memset(out, 0, sizeof *out);
    out->busy_known = true;
    if ((rc = rs_store_ranks_get(r, scope->job, &ranks, &n_ranks)) != 0)
        goto out;
    b.ranks = ranks;
    b.n_ranks = n_ranks;
    /* the collectives first: each rank's are merged with its kernels into its busy time, and
     * give the steps of a rank without step records */
    if ((rc = rs_store_collectives_scan(r, scope->job, on_collective, &b)) != 0)
        goto out;
    if (b.n_colls)
        qsort(b.colls, b.n_colls, sizeof *b.colls, by_rank_start);
    out->busy_known = !b.too_many_colls;
    size_t next = 0; /* the first collective of the rank */
    for (size_t i = 0; i < n_ranks; i++) {
        uint32_t rank = ranks[i].rank;
        if (!rs_profile_scope_has(scope, rank))
            continue;
        while (next < b.n_colls && b.colls[next].rank < rank)
            next++;
        size_t end = next;
        while (end < b.n_colls && b.colls[end].rank == rank)
            end++;
        b.rank_has_data = end > next;
        b.has_step_records = false;
        b.sampled = (ranks[i].collector_flags & RS_COLLECTOR_KERNELS_SAMPLED) != 0;
        b.n_traced = 0;
        out->sampled_ranks += b.sampled;
        rs_intervals_clear(&b.busy.iv);
        b.busy = (struct busy){b.busy.iv, 0, 0, 0, BUSY_COMPACT_MIN};
        for (size_t k = next; k < end && rc == 0; k++)
            rc = busy_add(&b.busy, b.colls[k].c.start_ns, b.colls[k].c.end_ns, false);
        if (rc != 0 ||
            (rc = rs_store_kernels_scan(r, scope->job, rank, from, b.until, on_kernel, &b)) != 0 ||
            (rc = rs_store_kernel_windows_scan(r, scope->job, rank, scope->since_ns, b.until,
                                               on_kernel_window, &b)) != 0 ||
            (rc = scan_host_side(r, &b, rank, from)) != 0 ||
            (traced_settle(&b), 0) || (rc = count_traced_collectives(&b, next, end)) != 0 ||
            (rc = rs_store_steps_scan(r, scope->job, rank, 0, on_step, &b)) != 0 ||
            (rc = rs_store_stalls_scan(r, scope->job, rank, scope->since_ns, b.until, on_stall,
                                       &b)) != 0)
            goto out;
        out->busy_ns += busy_total(&b.busy);
        if (!b.has_step_records && !b.too_many_colls &&
            (rc = count_inferred_steps(&b, next, end)) != 0)
            goto out;
        out->ranks += b.rank_has_data;
        next = end;
    }
    for (size_t i = 0; i < out->n_stalls; i++) {
        struct rs_profile_item *it = (struct rs_profile_item *)rs_profile_find(
            out, RS_PROFILE_KERNEL, out->stalls[i].kernel);
        if (it)
            it->stall_samples += out->stalls[i].samples;
    }
    if (out->ranks == 0 && scope->rank != RS_PROFILE_ALL_RANKS && !scope->peers)
        rc = RS_E_NOT_FOUND;
out:
    free(ranks);
    free(b.colls);
    free(b.traced);
    rs_intervals_fini(&b.busy.iv);
    rs_intervals_fini(&b.lw.iv);
    if (rc != 0)
        rs_profile_fini(out);
    return rc;
}

void
rs_profile_fini(struct rs_profile *p)
{
    for (size_t i = 0; i < p->n_items; i++)
        free(p->items[i].name);
    for (size_t i = 0; i < p->n_stalls; i++) {
        free(p->stalls[i].kernel);
        free(p->stalls[i].reason);
    }
    free(p->items);
    free(p->stalls);
    free(p->item_index);
    free(p->stall_index);
    memset(p, 0, sizeof *p);
}

double
rs_profile_divisor(const struct rs_profile *p, const char **unit)
{
    if (p->rank_steps > 0) {
        *unit = "per_step";
        return (double)p->rank_steps;
    }
    *unit = "per_second";
    double s = p->t1 > p->t0 ? (double)(p->t1 - p->t0) / 1e9 : 1.0;
    return s * (p->ranks ? p->ranks : 1);
}

json_t *
rs_profile_launch_wait_json(const struct rs_profile *p, double per)
{
    const struct rs_profile_sync *lw = &p->syncs[RS_LAUNCH_WAIT];
    if (!lw->count)
        return json_null();
    return json_pack("{s:f, s:f}", "ms", (double)lw->ns / 1e6 / per, "calls",
                     (double)lw->count / per);
}

json_t *
rs_profile_busy_json(const struct rs_profile *p, double per)
{
    return p->busy_known ? json_real((double)p->busy_ns / 1e6 / per) : json_null();
}

json_t *
rs_profile_syncs_json(const struct rs_profile *p, double per)
{
    json_t *list = json_array();

    for (uint32_t k = 0; list && k < RS_COPY_KIND_COUNT; k++)
        if (p->syncs[k].count && k != RS_LAUNCH_WAIT &&
            json_array_append_new(list, json_pack("{s:s, s:f, s:f}", "name", rs_copy_kind_name(k),
                                                  "ms", (double)p->syncs[k].ns / 1e6 / per, "calls",
                                                  (double)p->syncs[k].count / per)) != 0) {
            json_decref(list);
            return NULL;
        }
    return list;
}

uint64_t
rs_profile_reason_samples(const struct rs_profile *p, const char *reason)
{
    uint64_t n = 0;
    for (size_t i = 0; i < p->n_stalls; i++)
        if (strcmp(p->stalls[i].reason, reason) == 0)
            n += p->stalls[i].samples;
    return n;
}

bool
rs_profile_scope_has(const struct rs_profile_scope *scope, uint32_t rank)
{
    if (scope->rank == RS_PROFILE_ALL_RANKS)
        return true;
    return scope->peers ? rank != scope->rank : rank == scope->rank;
}

json_t *
rs_profile_scope_json(const struct rs_profile_scope *scope, const struct rs_profile *p)
{
    const char *unit;
    rs_profile_divisor(p, &unit);
    bool one = scope->rank != RS_PROFILE_ALL_RANKS && !scope->peers;
    json_t *doc =
        json_pack("{s:s, s:o, s:I, s:I, s:I, s:I, s:I, s:s}", "job", scope->job, "rank",
                  one ? json_integer((json_int_t)scope->rank) : json_null(), "since_ns",
                  (json_int_t)p->t0, "until_ns", (json_int_t)p->t1, "ranks", (json_int_t)p->ranks,
                  "rank_steps", (json_int_t)p->rank_steps, "inferred_rank_steps",
                  (json_int_t)p->inferred_rank_steps, "unit", unit);
    if (doc && p->sampled_ranks) { /* kernels traced in windows: what the figures stand for */
        json_object_set_new(doc, "sampled_ranks", json_integer((json_int_t)p->sampled_ranks));
        json_object_set_new(doc, "untraced_rank_steps",
                            json_integer((json_int_t)p->untraced_rank_steps));
    }
    if (doc && scope->peers && scope->rank != RS_PROFILE_ALL_RANKS)
        json_object_set_new(doc, "peers_of", json_integer((json_int_t)scope->rank));
    return doc;
}
