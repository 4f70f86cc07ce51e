/* Unit tests of activity collection (node-agent/collector/activity.c) against the stand-in CUPTI
 * (fake_cupti.h): the kinds it turns on (never the serializing KERNEL kind) and the host
 * synchronization modes; latency timestamps when launch waits are asked for, and the waits found
 * at exit; buffers CUPTI fills reach the converter; at exit, buffers that did not
 * come back are reported; and the hand-over — a second CUPTI client in another library
 * (kineto_standin.c, as torch.profiler's Kineto) subscribing makes the collector turn its kinds
 * off and take its buffers back before the client's call goes on, once. Each case runs in a
 * child process (t_isolated.h: activity.c keeps one state per process, as the collector does),
 * whose stderr is checked for what the collector says. */
#include "node-agent/collector/activity.h"
#include "node-agent/collector/attach.h"
#include "node-agent/collector/convert.h"
#include "tests/t.h"
#include "tests/t_isolated.h"
#include "tests/unit/collector/fake_cupti.h"
#include "common/clock.h"
#include "tests/unit/collector/t_convert.h"

#include <string.h>

int standin_subscribe(void); /* kineto_standin.c */
int standin_register(void);

static struct rs_activity_options
options(enum rs_activity_sync sync)
{
    /* the flush thread never ticks within a case: everything happens at finish or hand-over */
    return (struct rs_activity_options){60000, 64 << 10, NULL, sync, RS_ACTIVITY_LAUNCH_WAIT_OFF,
                                        true,  0,        0,  false};
}

/* A converter, and collection into it started with `sync`. */
static rs_convert *
started(enum rs_activity_sync sync)
{
    rs_convert *c = t_converter();
    struct rs_activity_options o = options(sync);
    T_EQ(rs_activity_start(c, &o), 0);
    return c;
}

static const CUpti_ActivityKind always[] = {
    CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MARKER};

/* RANKSCOPE_KERNELS=window with host synchronizations `sync`: devices and markers always;
 * kernels and copies only inside windows (300 ms every second of the wall clock, a flush thread
 * ticking every 10 ms): none at the start unless it falls in a window, windows opened and closed
 * while it runs, and off between them. (The flush thread alone touches the stand-in's state while
 * it runs: the test reads it after, and the window counts under the collector's lock; where the
 * windows fall on the clock is window_test's.) Returns the converter to free. */
static rs_convert *
windows_with_lw(enum rs_activity_sync sync, enum rs_activity_launch_wait lw)
{
    rs_convert *c = t_converter();
    struct rs_activity_options o = options(sync);
    struct rs_activity_window_stats ws;
    CUpti_CallbackId sync_cbid;

    o.launch_wait = lw;
    o.flush_ms = 10;
    o.window_ns = 300000000ull;
    o.period_ns = 1000000000ull;
    rs_convert_sync_call(0, &sync_cbid);
    /* start well after a window closed: nothing traced until the next one */
    uint64_t phase = rs_clock_realtime_ns() % o.period_ns;
    rs_clock_sleep_ns((450000000ull + o.period_ns - phase) % o.period_ns);
    T_EQ(rs_activity_start(c, &o), 0);
    T_CHECK(fake_cupti_kind_on(CUPTI_ACTIVITY_KIND_DEVICE));
    T_CHECK(fake_cupti_kind_on(CUPTI_ACTIVITY_KIND_MARKER));
    T_CHECK(!fake_cupti_kind_ever(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    /* wait for two windows to open and close, then for the middle of a gap */
    for (int i = 0; i < 400; i++) {
        rs_activity_get_window_stats(&ws);
        if (ws.closed >= 2)
            break;
        rs_clock_sleep_ns(10000000ull);
    }
    T_CHECK(ws.opened >= 2 && ws.closed >= 2);
    phase = rs_clock_realtime_ns() % o.period_ns;
    rs_clock_sleep_ns((600000000ull + o.period_ns - phase) % o.period_ns);
    rs_activity_finish(); /* the flush thread stops: its last tick was between windows */
    rs_activity_get_window_stats(&ws);
    T_EQ(ws.opened, ws.closed);
    T_CHECK(fake_cupti_kind_ever(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    T_CHECK(fake_cupti_kind_ever(CUPTI_ACTIVITY_KIND_MEMCPY));
    T_CHECK(!fake_cupti_kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    T_CHECK(!fake_cupti_kind_on(CUPTI_ACTIVITY_KIND_MEMSET));
    T_CHECK(!fake_cupti_driver_api_on(sync_cbid));
    T_CHECK(!fake_cupti_kind_on(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION));
    return c;
}

/* A window opens at its second, not at the flush thread's next tick: with a flush every 5 s and
 * windows of 100 ms every 400 ms, each window's kinds go on (the timeline's 'O') within 80 ms of
 * its start on the wall clock and off ('C') within 80 ms of its end (a loaded machine, a
 * sanitizer; a tick of the flush interval would be up to 5 s late, and fewer windows open). */
static void
windows_open_on_time(void)
{
    rs_convert *c = t_converter();
    struct rs_activity_options o = options(RS_ACTIVITY_SYNC_OFF);
    struct rs_attach_event ev[RS_ATTACH_EVENTS];
    struct rs_activity_window_stats ws;

    o.flush_ms = 5000;
    o.window_ns = 100000000ull;
    o.period_ns = 400000000ull;
    o.detach = false; /* the stand-in's re-attach is not what is timed here */
    T_EQ(rs_activity_start(c, &o), 0);
    rs_clock_sleep_ns(1500000000ull);
    rs_activity_get_window_stats(&ws);
    rs_activity_finish();
    size_t n = rs_attach_events(ev, RS_ATTACH_EVENTS), opened = 0, closed = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t at = ev[i].what == 'O' ? 0 : o.window_ns, phase = ev[i].realtime_ns % o.period_ns;
        if (ev[i].what != 'O' && ev[i].what != 'C')
            continue;
        T_CHECK(phase >= at && phase - at < 80000000ull);
        opened += ev[i].what == 'O';
        closed += ev[i].what == 'C';
    }
    T_CHECK(opened >= 3 && closed >= 3);
    T_CHECK(ws.opened >= 3);
    rs_convert_free(c);
}

static rs_convert *
windows_with(enum rs_activity_sync sync)
{
    return windows_with_lw(sync, RS_ACTIVITY_LAUNCH_WAIT_OFF);
}

/* The defaults (RANKSCOPE_SYNC=api, RANKSCOPE_LAUNCH_WAIT=api) in windows: nothing is recorded per
 * launch or per synchronizing call between windows — no driver-API records of any call, at start,
 * in the windows or after them, and never the SYNCHRONIZATION kind — since at 46.8 launches per ms
 * 0.5% of a launch-bound job's time is ~0.1 us per launch (docs/collector.md "Tiers"); and no
 * latency timestamps (they hung the LM with windows, measured): no launch waits in windows. */
static void
nothing_per_launch_between_windows(void)
{
    rs_convert *c = windows_with_lw(RS_ACTIVITY_SYNC_API, RS_ACTIVITY_LAUNCH_WAIT_API);
    T_CHECK(!fake_cupti_driver_api_ever());
    T_CHECK(!fake_cupti_kind_ever(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION));
    T_CHECK(!fake_cupti_kind_ever(CUPTI_ACTIVITY_KIND_DRIVER));
    T_CHECK(!fake_cupti_kind_ever(CUPTI_ACTIVITY_KIND_RUNTIME));
    T_CHECK(!fake_cupti_latency);
    rs_convert_free(c);
}

/* The default (RANKSCOPE_SYNC=api): no host synchronization records in windows at all — CUPTI's
 * SYNCHRONIZATION kind left a launch-bound job ~1.4x slower after the window that had it closed
 * (docs/BENCHMARKS.md "Noise first", D4), and driver-API records cannot be turned on late. */
static void
kernels_in_windows(void)
{
    rs_convert *c = windows_with(RS_ACTIVITY_SYNC_API);
    T_CHECK(!fake_cupti_kind_ever(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION));
    rs_convert_free(c);
}

/* RANKSCOPE_SYNC=1 asks for them by name: the SYNCHRONIZATION kind on inside windows, off between. */
static void
windows_with_sync_records(void)
{
    rs_convert *c = windows_with(RS_ACTIVITY_SYNC_RECORDS);
    T_CHECK(fake_cupti_kind_ever(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION));
    rs_convert_free(c);
}

static void
kinds_and_sync_by_api(void)
{
    rs_convert *c = started(RS_ACTIVITY_SYNC_API);
    CUpti_CallbackId cbid;

    T_EQ(fake_cupti_attribute_u8(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER), 1);
    for (size_t i = 0; i < sizeof always / sizeof always[0]; i++)
        T_CHECK(fake_cupti_kind_on(always[i]));
    T_CHECK(!fake_cupti_kind_ever(CUPTI_ACTIVITY_KIND_KERNEL)); /* it serializes kernels */
    T_CHECK(!fake_cupti_kind_ever(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION));
    for (size_t i = 0; rs_convert_sync_call(i, &cbid); i++)
        T_CHECK(fake_cupti_driver_api_on(cbid));
    T_CHECK(strstr(t_said(), "hand-over hooks: 2 call sites") != NULL); /* the stand-in's two */
    rs_activity_finish();
    rs_convert_free(c);
}

static void
sync_by_records(void)
{
    rs_convert *c = started(RS_ACTIVITY_SYNC_RECORDS);
    CUpti_CallbackId cbid;

    T_CHECK(fake_cupti_kind_on(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION));
    T_CHECK(rs_convert_sync_call(0, &cbid) && !fake_cupti_driver_api_on(cbid));
    rs_activity_finish();
    rs_convert_free(c);
}

static void
sync_off(void)
{
    rs_convert *c = started(RS_ACTIVITY_SYNC_OFF);
    CUpti_CallbackId cbid;

    T_CHECK(!fake_cupti_kind_ever(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION));
    T_CHECK(rs_convert_sync_call(0, &cbid) && !fake_cupti_driver_api_on(cbid));
    rs_activity_finish();
    rs_convert_free(c);
}

/* Launch waits from latency timestamps: they go on before the kinds (CUPTI wants them before CUDA
 * starts), and the waits between the kernels are all settled at exit, however long the lag.
 * Without launch waits, no latency timestamps and no launch-call records. */
static void
launch_waits_by_latency(void)
{
    rs_convert *c = t_converter_lag(60ull * 1000000000u);
    struct rs_activity_options o = options(RS_ACTIVITY_SYNC_OFF);

    o.launch_wait = RS_ACTIVITY_LAUNCH_WAIT_LATENCY;
    T_OK(rs_activity_start(c, &o));
    T_CHECK(strncmp(fake_cupti_log(), "RLK", 3) == 0);
    T_CHECK(fake_cupti_kernels(5)); /* kernels 1 and 3 were queued late */
    rs_activity_finish();
    T_EQ(t_convert_stats(c).kernels, 5);
    T_EQ(t_convert_stats(c).launch_wait.waits, 2);
    T_EQ(t_convert_stats(c).launch_wait.wait_ns, 8);
    rs_convert_free(c);
}

/* Launch waits from launch calls: driver-API records of every launch call, no latency timestamps;
 * turned off with the other kinds when another client takes CUPTI over. */
static void
launch_waits_by_api(void)
{
    rs_convert *c = t_converter_lag(60ull * 1000000000u);
    struct rs_activity_options o = options(RS_ACTIVITY_SYNC_OFF);
    CUpti_CallbackId cbid;
    size_t n = 0;

    o.launch_wait = RS_ACTIVITY_LAUNCH_WAIT_API;
    T_OK(rs_activity_start(c, &o));
    T_CHECK(strchr(fake_cupti_log(), 'L') == NULL);
    for (; rs_convert_launch_call(n, &cbid); n++)
        T_CHECK(fake_cupti_driver_api_on(cbid));
    T_CHECK(n >= 4); /* cuLaunchKernel, cuLaunchKernelEx and their _ptsz forms, at least */
    T_EQ(standin_subscribe(), 0);
    for (size_t i = 0; i < n && rs_convert_launch_call(i, &cbid); i++)
        T_CHECK(!fake_cupti_driver_api_on(cbid));
    rs_activity_finish();
    rs_convert_free(c);
}

static void
no_launch_waits(void)
{
    rs_convert *c = started(RS_ACTIVITY_SYNC_OFF);
    CUpti_CallbackId cbid;

    T_CHECK(strchr(fake_cupti_log(), 'L') == NULL && !fake_cupti_latency);
    for (size_t i = 0; rs_convert_launch_call(i, &cbid); i++)
        T_CHECK(!fake_cupti_driver_api_on(cbid));
    T_CHECK(fake_cupti_kernels(5));
    rs_activity_finish();
    T_EQ(t_convert_stats(c).kernels, 5);
    T_EQ(t_convert_stats(c).launch_wait.waits, 0);
    rs_convert_free(c);
}

/* Buffers the collector handed CUPTI come back zeroed-then-filled and are converted at exit's
 * forced flush; nothing is said on stderr. */
static void
buffers_reach_the_converter(void)
{
    rs_convert *c = started(RS_ACTIVITY_SYNC_API);

    T_CHECK(fake_cupti_kernels(3));
    T_CHECK(fake_cupti_kernels(2));
    T_EQ(t_convert_stats(c).kernels, 0);
    fake_cupti_reset();
    rs_activity_finish();
    T_CHECK(strcmp(fake_cupti_log(), "F") == 0); /* kinds stay on at exit: nobody else wants them */
    T_EQ(t_convert_stats(c).kernels, 5);
    T_CHECK(strstr(t_said(), "another CUPTI client") == NULL);
    rs_activity_finish(); /* once */
    T_CHECK(strcmp(fake_cupti_log(), "F") == 0);
    rs_convert_free(c);
}

/* A buffer that did not come back by exit went to a client we did not hear of: said once. */
static void
exit_reports_buffers_taken(void)
{
    rs_convert *c = started(RS_ACTIVITY_SYNC_API);

    T_CHECK(fake_cupti_kernels(1));
    T_CHECK(fake_cupti_kernels(1));
    fake_cupti_keep_buffers(1);
    rs_activity_finish();
    T_EQ(t_convert_stats(c).kernels, 1);
    T_CHECK(strstr(t_said(), "took the activity buffers: 1 of ours went to it") != NULL);
    rs_convert_free(c);
}

/* The other client's cuptiSubscribe reaches the collector first: kinds off, then the forced flush
 * that brings our buffers back, then the client's own call; its later
 * cuptiActivityRegisterCallbacks goes straight on, and exit does nothing more. */
static void
hand_over_at_subscribe(void)
{
    rs_convert *c = started(RS_ACTIVITY_SYNC_API);

    T_CHECK(fake_cupti_kernels(4));
    fake_cupti_reset();
    T_EQ(standin_subscribe(), CUPTI_SUCCESS);
    T_CHECK(strcmp(fake_cupti_log(), "XXXXXFs") == 0);
    for (size_t i = 0; i < sizeof always / sizeof always[0]; i++)
        T_CHECK(!fake_cupti_kind_on(always[i]));
    T_EQ(t_convert_stats(c).kernels, 4);
    T_CHECK(strstr(t_said(), "called cuptiSubscribe: rankscope handed CUPTI over") != NULL);
    T_EQ(standin_register(), CUPTI_SUCCESS);
    rs_activity_finish();
    T_CHECK(strcmp(fake_cupti_log(), "XXXXXFsR") == 0);
    rs_convert_free(c);
}

/* Detach mode (attach.h): windows of 300 ms every 2 s, started 1.6 s before the next, a flush
 * tick every 10 ms: the detach is asked for 0.5 s after start, ~1.1 s before the window. Returns
 * the converter; CUPTI is attached now (start: callbacks and DEVICE records, no MARKER, no
 * latency timestamps). */
static rs_convert *
detach_started(void)
{
    rs_convert *c = t_converter();
    struct rs_activity_options o = options(RS_ACTIVITY_SYNC_API);

    o.flush_ms = 10;
    o.window_ns = 300000000ull;
    o.period_ns = 2000000000ull;
    o.detach = true;
    uint64_t phase = rs_clock_realtime_ns() % o.period_ns;
    rs_clock_sleep_ns((400000000ull + o.period_ns - phase) % o.period_ns);
    T_EQ(rs_activity_start(c, &o), 0);
    T_CHECK(fake_cupti_kind_on(CUPTI_ACTIVITY_KIND_DEVICE));
    T_CHECK(!fake_cupti_kind_ever(CUPTI_ACTIVITY_KIND_MARKER));
    T_CHECK(!fake_cupti_latency);
    return c;
}

static unsigned
finalizes(void)
{
    return __atomic_load_n(&fake_cupti_finalizes, __ATOMIC_ACQUIRE);
}

/* Application threads leave driver calls every millisecond until CUPTI was finalized `n` times
 * in all (at most ~3 s). */
static void
driver_calls_until_finalized(unsigned n)
{
    for (int i = 0; i < 3000 && finalizes() < n; i++) {
        fake_cupti_driver_call_exit();
        rs_clock_sleep_ns(1000000ull);
    }
}

/* Between windows no CUPTI is attached: shortly after start, and again after a window, the
 * flush thread turns DEVICE off, brings every buffer back (forced flush), subscribes to the
 * driver-API domain, and the next driver call's exit detaches CUPTI (cuptiFinalize). The window
 * attaches it again by registering the buffer callbacks (no other call first: CUPTI would attach
 * lazily with none of ours), traces, and its kernels are converted before the detach. Nothing
 * calls CUPTI while it is detached, the exit included. */
static void
detached_between_windows(void)
{
    rs_convert *c = detach_started();
    struct rs_activity_window_stats ws = {0};
    struct rs_attach_stats as;

    driver_calls_until_finalized(1);
    T_EQ(finalizes(), 1);
    const char *asked = strstr(fake_cupti_log(), "XFso"); /* DEVICE off, flush, subscribe */
    T_CHECK(asked && strchr(asked, 'Z') != NULL);           /* then the detach */
    T_EQ(rs_attach_state(), RS_DETACHED);
    for (int i = 0; i < 300 && !ws.opened; i++) {
        rs_clock_sleep_ns(10000000ull);
        rs_activity_get_window_stats(&ws);
    }
    T_EQ(ws.opened, 1);
    rs_clock_sleep_ns(50000000ull); /* inside the window (300 ms) */
    T_CHECK(fake_cupti_kind_ever(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    /* attached again: a probe for another client, the callbacks, then DEVICE */
    T_CHECK(strstr(fake_cupti_log(), "ZsuRK") != NULL);
    T_CHECK(fake_cupti_kernels(3));
    driver_calls_until_finalized(2);
    T_EQ(finalizes(), 2);
    rs_activity_get_window_stats(&ws);
    T_EQ(ws.closed, 1);
    fake_cupti_reset();
    rs_activity_finish();
    T_CHECK(strcmp(fake_cupti_log(), "") == 0);
    T_EQ(t_convert_stats(c).kernels, 3); /* converted before the detach */
    T_EQ(fake_cupti_lazy_attaches, 0);
    rs_attach_get_stats(&as);
    T_CHECK(as.detaches >= 2 && as.attaches >= 1); /* more where the machine was slow */
    rs_convert_free(c);
}

/* No driver call came before the next window: the detach asked for is called off (the
 * subscription ends), CUPTI stays attached through the window, and at exit a pending detach is
 * called off before the last forced flush. */
static void
detach_called_off(void)
{
    rs_convert *c = detach_started();
    struct rs_activity_window_stats ws = {0};
    struct rs_attach_stats as;

    for (int i = 0; i < 300 && !ws.opened; i++) {
        rs_clock_sleep_ns(10000000ull);
        rs_activity_get_window_stats(&ws);
    }
    T_EQ(ws.opened, 1);
    T_EQ(finalizes(), 0);
    const char *asked = strstr(fake_cupti_log(), "so");
    T_CHECK(asked && strchr(asked, 'u') && strstr(strchr(asked, 'u'), "uKKKK") != NULL);
    T_CHECK(fake_cupti_kind_on(CUPTI_ACTIVITY_KIND_DEVICE));
    for (int i = 0; i < 300 && rs_attach_state() != RS_DETACHING; i++)
        rs_clock_sleep_ns(10000000ull); /* the window closes, a detach is asked for again */
    T_EQ(rs_attach_state(), RS_DETACHING);
    fake_cupti_reset();
    rs_activity_finish();
    T_CHECK(strstr(fake_cupti_log(), "uF") != NULL); /* (after a last tick's flush, maybe) */
    T_EQ(fake_cupti_lazy_attaches, 0);
    rs_attach_get_stats(&as);
    T_EQ(as.cancelled, 2);
    rs_convert_free(c);
}

/* cuptiFinalize refused: CUPTI stays attached, the subscription ends, it is said once, and no
 * detach is asked for again (no forced flush at every tick). */
static void
detach_refused(void)
{
    fake_cupti_finalize_result = CUPTI_ERROR_UNKNOWN;
    rs_convert *c = detach_started();

    for (int i = 0; i < 3000 && !strchr(fake_cupti_log(), 'Z'); i++) {
        fake_cupti_driver_call_exit();
        rs_clock_sleep_ns(1000000ull);
    }
    for (int i = 0; i < 300 && !strstr(t_said(), "CUPTI refused to detach"); i++)
        rs_clock_sleep_ns(10000000ull);
    rs_activity_finish();
    T_CHECK(strstr(t_said(), "CUPTI refused to detach between windows") != NULL);
    T_CHECK(fake_cupti_kind_on(CUPTI_ACTIVITY_KIND_DEVICE)); /* on again */
    const char *log = strstr(fake_cupti_log(), "so");
    log = log ? strchr(log, 'Z') : NULL;
    T_CHECK(log && strchr(log, 'u') != NULL);
    T_CHECK(log && strchr(strchr(log, 'u'), 's') == NULL); /* never asked again */
    T_EQ(rs_attach_state(), RS_ATTACHED);
    rs_convert_free(c);
}

/* A buffer of ours that did not come back from the forced flush (another client took it): no
 * detach — cuptiFinalize would discard it —, said once, DEVICE on again, and no forced flush at
 * every tick after. */
static void
buffer_not_back(void)
{
    rs_convert *c = detach_started();

    T_CHECK(fake_cupti_kernels(1));
    fake_cupti_keep_buffers(1);
    for (int i = 0; i < 300 && !strstr(t_said(), "did not come back"); i++)
        rs_clock_sleep_ns(10000000ull);
    rs_clock_sleep_ns(100000000ull); /* ~10 more ticks */
    rs_activity_finish();
    T_CHECK(strstr(t_said(), "a buffer of ours did not come back from CUPTI between windows") !=
            NULL);
    const char *log = fake_cupti_log();
    const char *first = strstr(log, "XF");
    T_CHECK(first && strstr(first + 2, "XF") == NULL); /* tried once */
    T_CHECK(strchr(log, 's') == NULL);                 /* never asked to detach */
    T_EQ(rs_attach_state(), RS_ATTACHED);
    T_CHECK(fake_cupti_kind_on(CUPTI_ACTIVITY_KIND_DEVICE));
    rs_convert_free(c);
}

/* Another CUPTI client that was not handed over to (a library loaded later) took CUPTI while it
 * was detached: at the window the probe finds its subscription, nothing of ours is registered
 * over its callbacks, it is said once and reported, and no window is traced again. */
static void
attach_taken_by_another(void)
{
    rs_convert *c = detach_started();
    struct rs_activity_window_stats ws = {0};

    driver_calls_until_finalized(1);
    T_EQ(rs_attach_state(), RS_DETACHED);
    __atomic_store_n(&fake_cupti_subscribe_v2_result, CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
                     __ATOMIC_RELEASE); /* the flush thread reads it */
    for (int i = 0; i < 300 && !strstr(t_said(), "another CUPTI client holds CUPTI"); i++)
        rs_clock_sleep_ns(10000000ull);
    fake_cupti_reset();
    rs_clock_sleep_ns(100000000ull); /* the rest of the window: tried no more */
    rs_activity_finish();
    T_CHECK(strstr(t_said(), "another CUPTI client holds CUPTI: rankscope traces no more") != NULL);
    rs_activity_get_window_stats(&ws);
    T_EQ(ws.opened, 0);
    T_CHECK(strchr(fake_cupti_log(), 'R') == NULL);
    T_CHECK(!fake_cupti_kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    rs_convert_free(c);
}

int
main(void)
{
    t_isolated_context = fake_cupti_log;
    T_RUN_ISOLATED(kinds_and_sync_by_api);
    T_RUN_ISOLATED(kernels_in_windows);
    T_RUN_ISOLATED(windows_open_on_time);
    T_RUN_ISOLATED(windows_with_sync_records);
    T_RUN_ISOLATED(nothing_per_launch_between_windows);
    T_RUN_ISOLATED(sync_by_records);
    T_RUN_ISOLATED(sync_off);
    T_RUN_ISOLATED(launch_waits_by_latency);
    T_RUN_ISOLATED(launch_waits_by_api);
    T_RUN_ISOLATED(no_launch_waits);
    T_RUN_ISOLATED(buffers_reach_the_converter);
    T_RUN_ISOLATED(exit_reports_buffers_taken);
    T_RUN_ISOLATED(hand_over_at_subscribe);
    T_RUN_ISOLATED(detached_between_windows);
    T_RUN_ISOLATED(detach_called_off);
    T_RUN_ISOLATED(detach_refused);
    T_RUN_ISOLATED(attach_taken_by_another);
    T_RUN_ISOLATED(buffer_not_back);
    t_isolated_done();
    return T_DONE("collector/activity");
}
