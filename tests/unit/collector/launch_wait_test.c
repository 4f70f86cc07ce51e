/* Unit tests of launch waits (node-agent/collector/launch_wait.c): which part of an idle gap is
 * the host's, work that covers a gap on another stream, arrival in any order, settling behind the
 * lag (which grows with the longest interval), late records, devices kept apart, the cap on
 * pending intervals. */
#include "node-agent/collector/launch_wait.h"
#include "tests/t.h"

#include <errno.h>
#include <stdlib.h>

#define MAX_WAITS 16

struct waits {
    size_t n;
    struct {
        uint32_t device, stream;
        uint64_t start_ns, end_ns;
    } w[MAX_WAITS];
    uint64_t total_ns;
    uint64_t last_end_ns[RS_LAUNCH_WAIT_MAX_DEVICES];
    bool out_of_order; /* a wait on a device before the end of the previous one there */
};

static void
collect(void *arg, uint32_t device, uint32_t stream, uint64_t start_ns, uint64_t end_ns)
{
    struct waits *ws = arg;

    T_CHECK(device < RS_LAUNCH_WAIT_MAX_DEVICES && start_ns < end_ns);
    if (device < RS_LAUNCH_WAIT_MAX_DEVICES) {
        ws->out_of_order |= start_ns < ws->last_end_ns[device];
        ws->last_end_ns[device] = end_ns;
    }
    if (ws->n < MAX_WAITS) {
        ws->w[ws->n].device = device;
        ws->w[ws->n].stream = stream;
        ws->w[ws->n].start_ns = start_ns;
        ws->w[ws->n].end_ns = end_ns;
    }
    ws->n++;
    ws->total_ns += end_ns - start_ns;
}

static rs_launch_wait *
tracker(uint64_t lag_ns)
{
    rs_launch_wait *lw = NULL;
    T_EQ(rs_launch_wait_new(lag_ns, &lw), 0);
    return lw;
}

static void
add(rs_launch_wait *lw, struct waits *ws, uint32_t device, uint32_t stream, uint64_t start,
    uint64_t end, uint64_t queued)
{
    T_OK(rs_launch_wait_add(lw, device, stream, start, end, queued, 0, collect, ws));
}

static bool
wait_is(const struct waits *ws, size_t i, uint64_t start, uint64_t end)
{
    return i < ws->n && i < MAX_WAITS && ws->w[i].start_ns == start && ws->w[i].end_ns == end;
}

/* The host's part of a gap ends at the queue time; the GPU's own part (queued, not yet running)
 * is no launch wait; work queued before the gap began ends it without a wait. */
static void
the_hosts_part_of_a_gap(void)
{
    rs_launch_wait *lw = tracker(1000);
    struct waits ws = {0};

    add(lw, &ws, 0, 7, 100, 200, 50);  /* the first: no gap before it */
    add(lw, &ws, 0, 7, 300, 400, 250); /* queued 50 ns into the gap */
    add(lw, &ws, 0, 7, 500, 600, 350); /* queued before the gap: the GPU's own idle */
    add(lw, &ws, 0, 9, 700, 800, 900); /* "queued" after it began (clock noise): up to its start */
    add(lw, &ws, 0, 7, 800, 900, 850); /* back to back: no gap */
    rs_launch_wait_settle(lw, true, collect, &ws);
    T_EQ(ws.n, 2);
    T_CHECK(wait_is(&ws, 0, 200, 250) && ws.w[0].device == 0 && ws.w[0].stream == 7);
    T_CHECK(wait_is(&ws, 1, 600, 700) && ws.w[1].stream == 9);
    struct rs_launch_wait_stats st;
    rs_launch_wait_get_stats(lw, &st);
    T_EQ(st.waits, 2);
    T_EQ(st.wait_ns, 150);
    T_EQ(st.late + st.forced + st.refused + st.unqueued, 0);
    rs_launch_wait_free(lw);
}

/* A gap on one stream while another stream's work runs is no idle GPU; work of unknown queue time
 * (a copy) ends a gap without a wait. */
static void
other_streams_and_unknown_queue_times(void)
{
    rs_launch_wait *lw = tracker(1000);
    struct waits ws = {0};

    add(lw, &ws, 0, 1, 100, 1000, 50);   /* long, on stream 1 */
    add(lw, &ws, 0, 2, 200, 300, 150);   /* inside it */
    add(lw, &ws, 0, 2, 500, 600, 450);   /* stream 2 idle before it, the GPU not */
    add(lw, &ws, 0, 2, 1200, 1300, 0);   /* a copy: no queue time */
    add(lw, &ws, 0, 2, 1500, 1600, 900); /* queued in time */
    add(lw, &ws, 0, 2, 1700, 1800, 1650);
    rs_launch_wait_settle(lw, true, collect, &ws);
    T_EQ(ws.n, 1);
    T_CHECK(wait_is(&ws, 0, 1600, 1650));
    struct rs_launch_wait_stats st;
    rs_launch_wait_get_stats(lw, &st);
    T_EQ(st.unqueued, 1);
    rs_launch_wait_free(lw);
}

/* The same intervals in any order give the same waits, emitted in time order. */
static void
any_arrival_order(void)
{
    static const uint64_t iv[][3] = {{100, 200, 50},    {300, 400, 250}, {420, 500, 410},
                                     {600, 700, 650},   {650, 900, 600}, {1000, 1100, 950},
                                     {1300, 1400, 1350}};
    enum { N = sizeof iv / sizeof iv[0] };
    struct waits first = {0};

    for (unsigned seed = 0; seed < 50; seed++) {
        rs_launch_wait *lw = tracker(1000);
        struct waits ws = {0};
        size_t order[N];
        for (size_t i = 0; i < N; i++)
            order[i] = i;
        srand(seed);
        for (size_t i = N - 1; seed && i > 0; i--) { /* seed 0: in order */
            size_t j = (size_t)rand() % (i + 1), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (size_t i = 0; i < N; i++)
            add(lw, &ws, 3, 1, iv[order[i]][0], iv[order[i]][1], iv[order[i]][2]);
        rs_launch_wait_settle(lw, true, collect, &ws);
        if (seed == 0)
            first = ws;
        T_EQ(ws.n, first.n);
        T_EQ(ws.total_ns, first.total_ns);
        T_CHECK(!ws.out_of_order);
        rs_launch_wait_free(lw);
    }
    /* the kernel queued at 650 starts at 600: the host's part ends at the start */
    T_EQ(first.n, 5);
    T_CHECK(wait_is(&first, 0, 200, 250) && wait_is(&first, 1, 400, 410) &&
            wait_is(&first, 2, 500, 600) && wait_is(&first, 3, 900, 950) &&
            wait_is(&first, 4, 1100, 1300));
}

/* A flush settles only what lies the lag plus the longest interval behind the newest start; a
 * record behind the settled time is late: counted, its busy time still ends later gaps. */
static void
settles_behind_the_lag(void)
{
    rs_launch_wait *lw = tracker(1000);
    struct waits ws = {0};
    struct rs_launch_wait_stats st;

    add(lw, &ws, 0, 1, 0, 100, 0);
    add(lw, &ws, 0, 1, 200, 300, 150); /* waits [100, 150) */
    rs_launch_wait_settle(lw, false, collect, &ws);
    T_EQ(ws.n, 0); /* newest start 200: nothing 1100 behind it */
    add(lw, &ws, 0, 1, 1300, 1400, 1250);
    rs_launch_wait_settle(lw, false, collect, &ws);
    T_EQ(ws.n, 0); /* settled before 200: the kernel at 200 could still have company */
    add(lw, &ws, 0, 1, 5000, 5100, 4000);
    rs_launch_wait_settle(lw, false, collect, &ws); /* settled before 3900 */
    T_EQ(ws.n, 2);
    T_CHECK(wait_is(&ws, 0, 100, 150) && wait_is(&ws, 1, 300, 1250));
    /* a record of 3000 .. 3500 comes now: late; the busy time runs to 3500 */
    add(lw, &ws, 0, 1, 3000, 3500, 2000);
    /* a long one grows the lag: after it, a flush settles 1000 + 3000 behind the newest start */
    add(lw, &ws, 0, 2, 6000, 9000, 5500);
    add(lw, &ws, 0, 1, 10000, 10100, 9500);
    rs_launch_wait_settle(lw, false, collect, &ws); /* before 6000 */
    T_EQ(ws.n, 3);
    T_CHECK(wait_is(&ws, 2, 3500, 4000));
    rs_launch_wait_settle(lw, true, collect, &ws);
    T_EQ(ws.n, 5);
    T_CHECK(wait_is(&ws, 3, 5100, 5500) && wait_is(&ws, 4, 9000, 9500));
    rs_launch_wait_get_stats(lw, &st);
    T_EQ(st.late, 1);
    T_EQ(st.unqueued, 1);
    /* after the last settle every record is late */
    add(lw, &ws, 0, 1, 20000, 20100, 19000);
    rs_launch_wait_settle(lw, true, collect, &ws);
    T_EQ(ws.n, 5);
    rs_launch_wait_get_stats(lw, &st);
    T_EQ(st.late, 2);
    rs_launch_wait_free(lw);
}

/* Queue times from launch calls, joined by correlation id, whether the call comes before its
 * work or after it (until the sweep); a call overwritten by one RS_LAUNCH_WAIT_CALLS launches
 * newer is forgotten; work without either is unqueued. */
static void
queue_times_by_launch_call(void)
{
    rs_launch_wait *lw = tracker(1000);
    struct waits ws = {0};
    struct rs_launch_wait_stats st;

    T_OK(rs_launch_wait_call(lw, 11, 50));
    T_OK(rs_launch_wait_add(lw, 0, 7, 100, 200, 0, 11, collect, &ws));
    T_OK(rs_launch_wait_call(lw, 12, 260));                            /* before its work */
    T_OK(rs_launch_wait_add(lw, 0, 7, 300, 400, 0, 12, collect, &ws)); /* waits [200, 260) */
    T_OK(rs_launch_wait_add(lw, 0, 7, 500, 600, 0, 13, collect, &ws));
    T_OK(rs_launch_wait_call(lw, 13, 450)); /* after it: waits [400, 450) */
    T_OK(rs_launch_wait_add(lw, 0, 7, 700, 800, 0, 14, collect, &ws));
    T_OK(rs_launch_wait_call(lw, 14, 650));
    T_OK(rs_launch_wait_call(lw, 14 + RS_LAUNCH_WAIT_CALLS, 1)); /* same slot: 14 forgotten */
    T_OK(rs_launch_wait_add(lw, 0, 7, 900, 1000, 0, 0, collect, &ws)); /* no call at all */
    rs_launch_wait_settle(lw, true, collect, &ws);
    T_EQ(ws.n, 2);
    T_CHECK(wait_is(&ws, 0, 200, 260) && wait_is(&ws, 1, 400, 450));
    rs_launch_wait_get_stats(lw, &st);
    T_EQ(st.unqueued, 2);
    rs_launch_wait_free(lw);
}

/* Each device has its own gaps; the 65th device is refused. */
static void
devices_apart(void)
{
    rs_launch_wait *lw = tracker(1000);
    struct waits ws = {0};
    struct rs_launch_wait_stats st;

    add(lw, &ws, 0, 1, 100, 200, 50);
    add(lw, &ws, 1, 1, 150, 400, 100); /* covers device 0's gap, but on device 1 */
    add(lw, &ws, 0, 1, 300, 400, 250);
    for (uint32_t d = 2; d < RS_LAUNCH_WAIT_MAX_DEVICES; d++)
        add(lw, &ws, d, 1, 100, 200, 50);
    T_EQ(rs_launch_wait_add(lw, 999, 1, 100, 200, 50, 0, collect, &ws), -ERANGE);
    rs_launch_wait_settle(lw, true, collect, &ws);
    T_EQ(ws.n, 1);
    T_CHECK(wait_is(&ws, 0, 200, 250) && ws.w[0].device == 0);
    rs_launch_wait_get_stats(lw, &st);
    T_EQ(st.refused, 1);
    rs_launch_wait_free(lw);
}

/* A device holding RS_LAUNCH_WAIT_MAX_PENDING intervals settles its older half early (counted);
 * waits stay in time order and none is lost. */
static void
pending_cap(void)
{
    rs_launch_wait *lw = tracker(UINT64_MAX / 4); /* never settled by the lag */
    struct waits ws = {0};
    struct rs_launch_wait_stats st;
    uint64_t n = RS_LAUNCH_WAIT_MAX_PENDING + 10;

    /* every kernel 10 ns long, 10 ns apart, queued 5 ns into its gap: a 5-ns wait each */
    for (uint64_t i = 0; i < n; i++)
        T_EQ(rs_launch_wait_add(lw, 0, 1, 1000 + 20 * i, 1010 + 20 * i, 995 + 20 * i, 0, collect,
                                &ws),
             0);
    rs_launch_wait_get_stats(lw, &st);
    T_EQ(st.forced, 1);
    T_CHECK(ws.n > 0 && ws.n < n);
    rs_launch_wait_settle(lw, true, collect, &ws);
    T_EQ(ws.n, n - 1);
    T_EQ(ws.total_ns, 5 * (n - 1));
    T_CHECK(!ws.out_of_order);
    rs_launch_wait_get_stats(lw, &st);
    T_EQ(st.late, 0);
    rs_launch_wait_free(lw);
}

/* Kernels traced in windows (RANKSCOPE_KERNELS=window): between windows nothing is recorded, so
 * the time from the last work of one window to the first of the next is not known to be idle —
 * without this rule it counted as one launch wait as long as the time between windows (28 s of a
 * 30 s period: launch waits past the wall time). Waits inside a window still count. */
static void
windows_untraced_between(void)
{
    rs_launch_wait *lw = tracker(1000);
    struct waits ws = {0};

    rs_launch_wait_traced_from(lw, 1000);       /* window 1 opens */
    add(lw, &ws, 0, 7, 1010, 1100, 1005);       /* first of the window: no gap known */
    add(lw, &ws, 0, 7, 1200, 1300, 1150);       /* host's 50 ns: a wait */
    rs_launch_wait_traced_from(lw, 30000);      /* window 2 opens, 28.7 us later */
    add(lw, &ws, 0, 7, 30010, 30100, 30005);    /* across the untraced time: no wait */
    add(lw, &ws, 0, 7, 30300, 30400, 30250);    /* inside window 2: a wait of 150 ns */
    rs_launch_wait_traced_from(lw, 60000);      /* window 3: its work arrives first, then ... */
    add(lw, &ws, 0, 7, 60300, 60400, 60250);
    add(lw, &ws, 0, 7, 60100, 60200, 60050);    /* ... earlier work of it, out of order */
    rs_launch_wait_settle(lw, true, collect, &ws);
    T_EQ(ws.n, 3);
    T_CHECK(wait_is(&ws, 0, 1100, 1150));
    T_CHECK(wait_is(&ws, 1, 30100, 30250));
    T_CHECK(wait_is(&ws, 2, 60200, 60250));
    T_EQ(ws.total_ns, 50 + 150 + 50);
    rs_launch_wait_free(lw);
}

int
main(void)
{
    T_RUN(the_hosts_part_of_a_gap);
    T_RUN(other_streams_and_unknown_queue_times);
    T_RUN(any_arrival_order);
    T_RUN(settles_behind_the_lag);
    T_RUN(queue_times_by_launch_call);
    T_RUN(devices_apart);
    T_RUN(pending_cap);
    T_RUN(windows_untraced_between);
    return T_DONE("collector/launch_wait");
}
