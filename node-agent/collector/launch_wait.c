/* Launch waits from GPU intervals and their queue times (see launch_wait.h). */
#include "node-agent/collector/launch_wait.h"

#include "common/array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct busy {
    uint64_t start_ns, end_ns, queued_ns;
    uint32_t stream, correlation;
};

struct call {
    uint32_t correlation;
    uint64_t queued_ns;
};

struct device {
    uint32_t id;
    /* Intervals not swept yet: v[0, sorted) in start order, v[sorted, n) as they came. */
    struct busy *v;
    size_t n, cap, sorted;
    struct busy *scratch; /* for merging the two parts */
    size_t scratch_cap;
    uint64_t newest_start_ns;
    uint64_t longest_ns;
    uint64_t settled_ns;  /* every interval that starts before it has been swept */
    uint64_t busy_end_ns; /* the end of the busy time swept so far; 0 before the first */
};

struct rs_launch_wait {
    uint64_t min_lag_ns;
    struct device devices[RS_LAUNCH_WAIT_MAX_DEVICES];
    unsigned n_devices;
    struct call *calls; /* RS_LAUNCH_WAIT_CALLS, by correlation id modulo; NULL before the first */
    /* when tracing (re)started (windows), the last RS_LAUNCH_WAIT_TRACE_STARTS, in a ring */
    uint64_t trace_starts[RS_LAUNCH_WAIT_TRACE_STARTS];
    unsigned n_trace_starts;
    struct rs_launch_wait_stats stats;
};

int
rs_launch_wait_new(uint64_t min_lag_ns, rs_launch_wait **out)
{
    rs_launch_wait *lw = calloc(1, sizeof *lw);

    if (!lw)
        return -ENOMEM;
    lw->min_lag_ns = min_lag_ns;
    *out = lw;
    return 0;
}

void
rs_launch_wait_free(rs_launch_wait *lw)
{
    if (!lw)
        return;
    for (unsigned i = 0; i < lw->n_devices; i++) {
        free(lw->devices[i].v);
        free(lw->devices[i].scratch);
    }
    free(lw->calls);
    free(lw);
}

static struct device *
device_of(rs_launch_wait *lw, uint32_t id)
{
    for (unsigned i = 0; i < lw->n_devices; i++)
        if (lw->devices[i].id == id)
            return &lw->devices[i];
    if (lw->n_devices == RS_LAUNCH_WAIT_MAX_DEVICES)
        return NULL;
    lw->devices[lw->n_devices].id = id;
    return &lw->devices[lw->n_devices++];
}

static int
by_start(const void *a, const void *b)
{
    uint64_t x = ((const struct busy *)a)->start_ns, y = ((const struct busy *)b)->start_ns;
    return (x > y) - (x < y);
}

/* Puts all of d->v in start order: sorts the part that came since the last sweep and merges it
 * with the rest, already sorted (each flush brings a little; a lag's worth stays). */
static void
sort_pending(struct device *d)
{
    size_t i = 0, j = d->sorted, k = 0;

    qsort(d->v + d->sorted, d->n - d->sorted, sizeof d->v[0], by_start);
    if (d->sorted == 0 || d->sorted == d->n) {
        d->sorted = d->n;
        return;
    }
    if (RS_ARRAY_RESERVE(d->scratch, d->scratch_cap, 0, d->n) != 0) {
        qsort(d->v, d->n, sizeof d->v[0], by_start); /* no memory to merge: sort in place */
        d->sorted = d->n;
        return;
    }
    while (i < d->sorted && j < d->n)
        d->scratch[k++] = d->v[j].start_ns < d->v[i].start_ns ? d->v[j++] : d->v[i++];
    while (i < d->sorted)
        d->scratch[k++] = d->v[i++];
    while (j < d->n)
        d->scratch[k++] = d->v[j++];
    struct busy *t = d->v;
    size_t cap = d->cap;
    d->v = d->scratch;
    d->cap = d->scratch_cap;
    d->scratch = t;
    d->scratch_cap = cap;
    d->sorted = d->n;
}

/* The queue time of the launch call of `correlation`, 0 when unknown. */
static uint64_t
call_queued(const rs_launch_wait *lw, uint32_t correlation)
{
    const struct call *c;

    if (!correlation || !lw->calls)
        return 0;
    c = &lw->calls[correlation % RS_LAUNCH_WAIT_CALLS];
    return c->correlation == correlation ? c->queued_ns : 0;
}

int
rs_launch_wait_call(rs_launch_wait *lw, uint32_t correlation, uint64_t queued_ns)
{
    if (!lw->calls && !(lw->calls = calloc(RS_LAUNCH_WAIT_CALLS, sizeof lw->calls[0]))) {
        lw->stats.refused++;
        return -ENOMEM;
    }
    lw->calls[correlation % RS_LAUNCH_WAIT_CALLS] = (struct call){correlation, queued_ns};
    return 0;
}

/* True when tracing (re)started within (g0, t]: the gap was not watched all along. */
static bool
untraced_between(const rs_launch_wait *lw, uint64_t g0, uint64_t t)
{
    unsigned n = lw->n_trace_starts < RS_LAUNCH_WAIT_TRACE_STARTS ? lw->n_trace_starts
                                                                   : RS_LAUNCH_WAIT_TRACE_STARTS;
    for (unsigned i = 0; i < n; i++)
        if (lw->trace_starts[i] > g0 && lw->trace_starts[i] <= t)
            return true;
    return false;
}

/* Walks one interval in start order: a gap before it that began before the host queued it is a
 * launch wait — unless tracing started during it (a window opened: what ran before is unknown). */
static void
sweep(rs_launch_wait *lw, struct device *d, const struct busy *b, rs_launch_wait_fn emit, void *arg)
{
    uint64_t g0 = d->busy_end_ns, q = b->queued_ns ? b->queued_ns : call_queued(lw, b->correlation);

    if (!q)
        lw->stats.unqueued++;
    if (g0 && b->start_ns > g0 && q > g0 && !untraced_between(lw, g0, b->start_ns)) {
        uint64_t g1 = q < b->start_ns ? q : b->start_ns;
        emit(arg, d->id, b->stream, g0, g1);
        lw->stats.waits++;
        lw->stats.wait_ns += g1 - g0;
    }
    if (b->end_ns > d->busy_end_ns)
        d->busy_end_ns = b->end_ns;
}

/* Sweeps the intervals that start before `horizon`; they leave the pending set. */
static void
settle_device(rs_launch_wait *lw, struct device *d, uint64_t horizon, rs_launch_wait_fn emit,
              void *arg)
{
    size_t i = 0;

    if (horizon <= d->settled_ns)
        return;
    sort_pending(d);
    for (; i < d->n && d->v[i].start_ns < horizon; i++)
        sweep(lw, d, &d->v[i], emit, arg);
    memmove(d->v, d->v + i, (d->n - i) * sizeof d->v[0]);
    d->n -= i;
    d->sorted = d->n;
    d->settled_ns = horizon;
}

int
rs_launch_wait_add(rs_launch_wait *lw, uint32_t device, uint32_t stream, uint64_t start_ns,
                   uint64_t end_ns, uint64_t queued_ns, uint32_t correlation,
                   rs_launch_wait_fn emit, void *arg)
{
    struct device *d = device_of(lw, device);

    if (!d) {
        lw->stats.refused++;
        return -ERANGE;
    }
    if (end_ns < start_ns)
        end_ns = start_ns;
    if (!queued_ns) /* its call may be known already (else it may come before the sweep) */
        queued_ns = call_queued(lw, correlation);
    if (start_ns < d->settled_ns) {
        /* Its gap was settled without it (maybe with a wait it would have cancelled); the busy
         * time it adds after the settled part still counts. */
        lw->stats.late++;
        if (end_ns > d->busy_end_ns)
            d->busy_end_ns = end_ns;
        return 0;
    }
    if (d->n == RS_LAUNCH_WAIT_MAX_PENDING) {
        sort_pending(d);
        lw->stats.forced++;
        settle_device(lw, d, d->v[d->n / 2].start_ns + 1, emit, arg);
    }
    if (RS_ARRAY_RESERVE(d->v, d->cap, d->n, 1) != 0) {
        lw->stats.refused++;
        return -ENOMEM;
    }
    d->v[d->n++] = (struct busy){start_ns, end_ns, queued_ns, stream, correlation};
    if (start_ns > d->newest_start_ns)
        d->newest_start_ns = start_ns;
    if (end_ns - start_ns > d->longest_ns)
        d->longest_ns = end_ns - start_ns;
    return 0;
}

void
rs_launch_wait_settle(rs_launch_wait *lw, bool all, rs_launch_wait_fn emit, void *arg)
{
    for (unsigned i = 0; i < lw->n_devices; i++) {
        struct device *d = &lw->devices[i];
        uint64_t lag = lw->min_lag_ns + d->longest_ns;
        uint64_t horizon = all                        ? UINT64_MAX
                           : d->newest_start_ns > lag ? d->newest_start_ns - lag
                                                      : 0;
        settle_device(lw, d, horizon, emit, arg);
    }
}

void
rs_launch_wait_get_stats(const rs_launch_wait *lw, struct rs_launch_wait_stats *out)
{
    *out = lw->stats;
}

void
rs_launch_wait_traced_from(rs_launch_wait *lw, uint64_t at_ns)
{
    lw->trace_starts[lw->n_trace_starts++ % RS_LAUNCH_WAIT_TRACE_STARTS] = at_ns;
}
