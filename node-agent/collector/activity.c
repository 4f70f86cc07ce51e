/* CUPTI buffers, activity kinds and the flush thread (see activity.h). */
#include "node-agent/collector/activity.h"

#include "common/clock.h"
#include "node-agent/collector/attach.h"
#include "node-agent/collector/capture.h"
#include "node-agent/collector/got_hook.h"
#include "node-agent/collector/log.h"
#include "node-agent/collector/plugin.h"
#include "node-agent/collector/window.h"

#include <cupti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static struct {
    rs_convert *conv;
    struct rs_activity_options opts;
    pthread_mutex_t lock; /* conv: flush thread vs. CUPTI's worker thread */
    pthread_mutex_t wake_lock;
    pthread_cond_t wake;
    pthread_t thread;
    bool running, stopping;
    /* Buffers we handed to CUPTI, and those it handed back to us: after the final forced flush
     * the rest went to another client's callback (see taken_over). */
    atomic_size_t buffers_out, buffers_back;
    /* Collection stops once (stop_collection): at exit, or when another CUPTI client takes over. */
    pthread_mutex_t stop_lock;
    bool stopped;
    /* kernel tracing in windows (window.h); flush thread only, but for the stats */
    struct rs_window_schedule window;
    bool windows;                /* tracing in windows, not always */
    bool traced_refused;         /* CUPTI refused the traced kinds at a window: said once */
    bool detach_refused;         /* CUPTI refused to detach: said once */
    bool traced_on;              /* the traced kinds are on now (a window or a capture) */
    uint64_t capture_until_mono; /* a capture keeps them on until then (capture.h) */
    uint64_t off_mono;           /* when they went off, or collection started (detach) */
    bool attach_refused;         /* another client holds CUPTI now: no more windows (detach) */
    struct rs_activity_window_stats window_stats;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER,
       .wake_lock = PTHREAD_MUTEX_INITIALIZER,
       .wake = PTHREAD_COND_INITIALIZER,
       .stop_lock = PTHREAD_MUTEX_INITIALIZER};

/* The kinds always on (host synchronizations and markers are optional: sync_start, MARKER), and
 * those of them that are on only inside the windows when tracing in windows (with host
 * synchronizations when RANKSCOPE_SYNC=1 asks for them there). */
static const CUpti_ActivityKind always_kinds[] = {
    CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET};
#define N_ALWAYS_KINDS (sizeof always_kinds / sizeof always_kinds[0])
#define FIRST_TRACED_KIND 1 /* always_kinds[1..]: traced in windows */
/* Detach mode: CUPTI is detached this long after the kinds went off (and at least a flush tick
 * after), so that the kernels still queued or running at a window's end — an NCCL kernel waiting
 * for a slow rank among them — have completed and come back whole. The attached tail costs a
 * launch-bound job ~8% for its length: 0.5 s a minute is ~0.07% (docs/collector.md "Tiers"). */
#define DETACH_AFTER_NS 500000000ull

/* Application thread (whichever filled the last buffer): must be quick. */
static void CUPTIAPI
buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    /* calloc of a large block is an mmap of zero pages: zeroed without touching them, which is
     * what CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER=1 asks of us. NULL drops records; CUPTI
     * counts them and we report the count. */
    *buffer = calloc(1, g.opts.buffer_bytes);
    *size = *buffer ? g.opts.buffer_bytes : 0;
    *max_records = 0;
    if (*buffer)
        atomic_fetch_add_explicit(&g.buffers_out, 1, memory_order_relaxed);
}

/* CUPTI's worker thread or our flush thread (inside cuptiActivityFlushAll). */
static void CUPTIAPI
buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    CUpti_Activity *record = NULL;
    size_t dropped = 0;

    atomic_fetch_add_explicit(&g.buffers_back, 1, memory_order_relaxed);
    pthread_mutex_lock(&g.lock);
    while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
        rs_convert_record(g.conv, record);
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
        rs_convert_count_dropped(g.conv, dropped);
    pthread_mutex_unlock(&g.lock);
    free(buffer);
}

static void
plugin_done(void *arg, const struct rs_plugin_op *op)
{
    rs_convert_plugin_op(arg, op);
}

static void
plugin_in_flight(void *arg, const struct rs_plugin_op *op)
{
    rs_convert_in_flight(arg, op, rs_clock_realtime_ns());
}

/* Sends what was converted, with the NCCL operations the plugin finished by now (under our
 * lock: rs_convert is not thread-safe); `last`: at the end of collection. */
static void
send_converted(bool last)
{
    struct rs_clock_pair clock = {0, 0};

    /* CUPTI's clock, paired with CLOCK_REALTIME; none while CUPTI is detached (attach.h: a call
     * would attach it), and then no CUPTI records either */
    if (rs_attach_state() != RS_DETACHED)
        cuptiGetTimestamp(&clock.source_ns);
    clock.realtime_ns = rs_clock_realtime_ns();
    pthread_mutex_lock(&g.lock);
    rs_convert_in_flight_begin(g.conv);
    rs_plugin_drain(clock.realtime_ns, last, plugin_done, plugin_in_flight, g.conv);
    rs_convert_in_flight_end(g.conv);
    if (rs_convert_check_clock(g.conv, &clock))
        rs_collector_log("CUPTI timestamps are not CLOCK_REALTIME (off by %.3f s): another tool "
                         "replaced CUPTI's clock",
                         ((double)clock.realtime_ns - (double)clock.source_ns) / 1e9);
    rs_convert_flush(g.conv, &clock, last);
    pthread_mutex_unlock(&g.lock);
}

static bool sync_start(enum rs_activity_sync how);
static void sync_stop(enum rs_activity_sync how);
static bool launch_wait_start(enum rs_activity_launch_wait how);
static void launch_wait_stop(enum rs_activity_launch_wait how);

/* Turns the traced kinds on (a window opens) or off (it closes); false when CUPTI refused. */
static bool
traced_kinds(bool on)
{
    bool ok = true;

    for (size_t i = FIRST_TRACED_KIND; i < N_ALWAYS_KINDS; i++)
        ok = (on ? cuptiActivityEnable(always_kinds[i]) : cuptiActivityDisable(always_kinds[i])) ==
                 CUPTI_SUCCESS &&
             ok;
    if (on) {
        sync_start(g.opts.sync);
    } else {
        sync_stop(g.opts.sync);
        launch_wait_stop(g.opts.launch_wait);
    }
    return ok;
}

/* Detach mode (attach.h): CUPTI attached again before a window's kinds go on (or a pending detach
 * called off), with the DEVICE records that name the GPUs, turned off for the detach; false when
 * CUPTI refused. */
static bool
attached_for_tracing(void)
{
    bool was_attached = rs_attach_state() == RS_ATTACHED;

    if (rs_attach_attach(buffer_requested, buffer_completed) != 0)
        return false;
    return was_attached || cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE) == CUPTI_SUCCESS;
}

/* Detach mode, between windows (flush thread, attach lock held, CUPTI attached): DETACH_AFTER_NS
 * after the kinds went off, every buffer is brought back by a forced flush and the detach is asked
 * for (attach.h). A buffer of ours still out after a forced flush went to another client
 * (taken_over): cuptiFinalize would discard it, so CUPTI stays attached for good, as when the
 * detach is refused — DEVICE records on again, said once, never tried again (no forced flush at
 * every tick). */
static void
detach_between_windows(void)
{
    const char *why = NULL;

    if (g.detach_refused || g.traced_on || rs_attach_state() != RS_ATTACHED ||
        rs_clock_mono_ns() - g.off_mono < DETACH_AFTER_NS)
        return;
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DEVICE);
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (atomic_load(&g.buffers_back) < atomic_load(&g.buffers_out))
        why = "a buffer of ours did not come back from CUPTI";
    else if (rs_attach_detach() != 0)
        why = "CUPTI refused to detach";
    if (why) {
        g.detach_refused = true;
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE);
        rs_collector_log("%s between windows; it stays attached (this costs launch-bound jobs "
                         "more: docs/collector.md)",
                         why);
    }
}

/* Opens or closes a window when the wall clock says so (window.h), or a capture does (capture.h:
 * the kinds stay on until it ends), timing what it costs. `locked`: the caller holds g.lock (a
 * capture starting). Returns false when CUPTI refused to turn the kinds on or off. */
static bool
window_tick(bool locked)
{
    uint64_t t0 = rs_clock_mono_ns();
    uint64_t cupti_now = 0;

    rs_window_tick(&g.window, rs_clock_realtime_ns(), t0);
    bool want = g.window.open || t0 < g.capture_until_mono;
    if (want == g.traced_on)
        return true;
    if (want && g.opts.detach && (g.attach_refused || !attached_for_tracing())) {
        if (!g.attach_refused && rs_attach_state() == RS_DETACHED) {
            /* another client holds CUPTI now (attach.h): it is its; stay out for good */
            g.attach_refused = true;
            rs_collector_log("another CUPTI client holds CUPTI: rankscope traces no more kernel "
                             "windows in this process");
            if (!locked)
                pthread_mutex_lock(&g.lock);
            rs_convert_report(g.conv, RS_COLLECTOR_STEPPED_ASIDE,
                              "another CUPTI client took CUPTI between kernel windows: no more "
                              "kernel windows in this process");
            if (!locked)
                pthread_mutex_unlock(&g.lock);
        } else if (!g.traced_refused) {
            g.traced_refused = true;
            rs_collector_log("CUPTI refused to attach again for a window; windows may be missing");
        }
        return false; /* tried again at the next tick, unless another client holds CUPTI */
    }
    /* CUPTI's clock before the kinds go on: every record of the window starts after it */
    if (want)
        cuptiGetTimestamp(&cupti_now);
    bool ok = traced_kinds(want);
    uint64_t took = rs_clock_mono_ns() - t0;
    g.traced_on = want;
    g.off_mono = t0;
    if (!locked)
        pthread_mutex_lock(&g.lock);
    rs_attach_note(want ? 'O' : 'C');
    if (want) {
        rs_convert_traced_from(g.conv, cupti_now);
        g.window_stats.opened++;
        g.window_stats.open_ns += took;
    } else {
        g.window_stats.closed++;
        g.window_stats.close_ns += took;
    }
    if (!locked)
        pthread_mutex_unlock(&g.lock);
    if (!ok && !g.traced_refused) {
        g.traced_refused = true;
        rs_collector_log("CUPTI refused to turn kernel tracing %s at a window; windows may be "
                         "incomplete",
                         want ? "on" : "off");
    }
    return ok;
}

int
rs_activity_capture_kernels(unsigned seconds, char *why, size_t len)
{
    g.capture_until_mono = seconds ? rs_clock_mono_ns() + (uint64_t)seconds * 1000000000ull : 0;
    if (!g.windows)
        return 0;                      /* always on */
    if (window_tick(true) || !seconds) /* on now, so that a refusal is known at once */
        return 0;
    g.capture_until_mono = 0;
    snprintf(why, len, "CUPTI refused to turn kernel tracing on%s",
             g.opts.pc_sampling ? " (PC sampling is on in this process: CUPTI then refuses kernel "
                                  "activity turned on later)"
                                : "");
    return -1;
}

static void *
flush_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&g.wake_lock);
    while (!g.stopping) {
        /* the next flush, or a window's start or end if that comes first (window.h) */
        uint64_t now = rs_clock_realtime_ns(), wake = now + (uint64_t)g.opts.flush_ms * 1000000u;
        uint64_t change = g.windows ? rs_window_next_change(&g.window, now) : UINT64_MAX;
        if (change < wake)
            wake = change;
        struct timespec until = {(time_t)(wake / 1000000000u), (long)(wake % 1000000000u)};
        pthread_cond_timedwait(&g.wake, &g.wake_lock, &until);
        if (g.stopping)
            break;
        pthread_mutex_unlock(&g.wake_lock);
        rs_attach_lock(); /* no detach while this tick calls CUPTI */
        pthread_mutex_lock(&g.lock);
        rs_capture_tick(g.conv); /* orders from the agent (capture.h) */
        pthread_mutex_unlock(&g.lock);
        if (g.windows)
            window_tick(false);
        if (rs_attach_state() != RS_DETACHED) {
            /* Completed buffers only (0): no GPU synchronisation, no incomplete records. */
            cuptiActivityFlushAll(0);
            if (g.opts.detach)
                detach_between_windows();
        }
        rs_pcsampling_tick(rs_clock_mono_ns());
        send_converted(false);
        rs_attach_unlock();
        pthread_mutex_lock(&g.wake_lock);
    }
    pthread_mutex_unlock(&g.wake_lock);
    return NULL;
}

static int
check(CUptiResult rc, const char *what)
{
    const char *text = NULL;

    if (rc == CUPTI_SUCCESS)
        return 0;
    cuptiGetResultString(rc, &text);
    rs_collector_log("%s failed: %s; collection is off in this process", what,
                     text ? text : "unknown CUPTI error");
    return (int)rc;
}

/* Turns on the host synchronization records `how` asks for; false when CUPTI refused. */
static bool
sync_start(enum rs_activity_sync how)
{
    CUpti_CallbackId cbid;

    switch (how) {
    case RS_ACTIVITY_SYNC_OFF:
        return true;
    case RS_ACTIVITY_SYNC_RECORDS:
        /* only completed ones: a query that found work still running is not a wait */
        return cuptiActivityEnableAllSyncRecords(0) == CUPTI_SUCCESS &&
               cuptiActivityEnable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) == CUPTI_SUCCESS;
    case RS_ACTIVITY_SYNC_API:
        for (size_t i = 0; rs_convert_sync_call(i, &cbid); i++)
            if (cuptiActivityEnableDriverApi(cbid, 1) != CUPTI_SUCCESS)
                return false;
        return true;
    }
    return false;
}

/* Turns on what gives kernels their queue times; false when CUPTI refused. */
static bool
launch_wait_start(enum rs_activity_launch_wait how)
{
    CUpti_CallbackId cbid;
    bool ok = true;

    if (how == RS_ACTIVITY_LAUNCH_WAIT_LATENCY)
        return cuptiActivityEnableLatencyTimestamps(1) == CUPTI_SUCCESS;
    for (size_t i = 0; how == RS_ACTIVITY_LAUNCH_WAIT_API && rs_convert_launch_call(i, &cbid); i++)
        ok = cuptiActivityEnableDriverApi(cbid, 1) == CUPTI_SUCCESS && ok;
    return ok;
}

/* Turns off what launch_wait_start turned on (latency timestamps are an attribute, not records:
 * they stay). */
static void
launch_wait_stop(enum rs_activity_launch_wait how)
{
    CUpti_CallbackId cbid;

    for (size_t i = 0; how == RS_ACTIVITY_LAUNCH_WAIT_API && rs_convert_launch_call(i, &cbid); i++)
        cuptiActivityEnableDriverApi(cbid, 0);
}

/* Turns off what sync_start turned on. */
static void
sync_stop(enum rs_activity_sync how)
{
    CUpti_CallbackId cbid;

    if (how == RS_ACTIVITY_SYNC_RECORDS)
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    if (how == RS_ACTIVITY_SYNC_API)
        for (size_t i = 0; rs_convert_sync_call(i, &cbid); i++)
            cuptiActivityEnableDriverApi(cbid, 0);
}

static void install_hand_over_hooks(void);

int
rs_activity_start(rs_convert *conv, const struct rs_activity_options *opts)
{
    uint8_t zeroed = 1;
    size_t len = sizeof zeroed;
    int rc;

    g.conv = conv;
    g.opts = *opts;
    if ((rc = check(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &len,
                                              &zeroed),
                    "cuptiActivitySetAttribute(ZEROED_OUT)")) ||
        (rc = check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
                    "cuptiActivityRegisterCallbacks")))
        return rc;
    /* Queue times of kernels, for launch waits; before the kinds (CUPTI wants latency timestamps
     * before CUDA is initialized: we run inside cuInit); optional. */
    g.windows = opts->window_ns > 0;
    g.opts.detach = opts->detach && g.windows && !opts->pc_sampling;
    g.off_mono = rs_clock_mono_ns();
    g.window =
        (struct rs_window_schedule){.window_ns = opts->window_ns, .period_ns = opts->period_ns};
    /* In windows no launch waits. Driver-API records cannot be turned on once CUDA runs: on an
     * H100 (CUDA 13.0) records of the launch calls turned on 300 ms after start, per call or as
     * the whole DRIVER kind, gave 0 of 300,000 launches (docs/BENCHMARKS.md "Default tiers"). The
     * other source of queue times, CUPTI's latency timestamps set at start, hung the LM: 5 of 5
     * processes with windows every 8 s stopped for good within ~35 s, 0 of 7 without them
     * (docs/BENCHMARKS.md "CUPTI detached between windows"). Host synchronizations in windows and
     * captures only when asked for by name (RANKSCOPE_SYNC=1: the SYNCHRONIZATION kind): on an
     * H100 the LM's steps stayed ~1.4x slower for as long as they were timed after a window with
     * that kind had closed, its records off (docs/BENCHMARKS.md "Noise first", D4) — so a window
     * would cost a launch-bound job what tracing always costs. The default (api) records none in
     * windows. */
    if (g.windows)
        g.opts.launch_wait = RS_ACTIVITY_LAUNCH_WAIT_OFF;
    if (g.windows && g.opts.sync == RS_ACTIVITY_SYNC_API)
        g.opts.sync = RS_ACTIVITY_SYNC_OFF;
    if (!launch_wait_start(g.opts.launch_wait))
        rs_collector_log("queue times of kernels unavailable: no launch waits");
    size_t n_kinds = g.windows ? FIRST_TRACED_KIND : N_ALWAYS_KINDS;
    for (size_t i = 0; i < n_kinds; i++) {
        if ((rc = check(cuptiActivityEnable(always_kinds[i]), "cuptiActivityEnable"))) {
            for (size_t j = 0; j < i; j++)
                cuptiActivityDisable(always_kinds[j]);
            return rc;
        }
    }
    /* Host synchronizations (cudaStreamSynchronize, .item(), ...); optional; in windows: inside
     * them only. */
    if (!g.windows && !sync_start(g.opts.sync))
        rs_collector_log("host synchronization records unavailable");
    /* NVTX markers (step ranges) when NVTX is routed to CUPTI; optional. (Detach mode is only
     * for processes where it is not: markers need CUPTI attached.) */
    if (!g.opts.detach && cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER) != CUPTI_SUCCESS)
        rs_collector_log("NVTX markers unavailable: steps will be inferred, not read");
    /* PC sampling after the activity kinds: CUPTI refuses CONCURRENT_KERNEL after it (measured) */
    if (opts->pc_sampling)
        rs_pcsampling_start(conv, &g.lock, opts->pc_sampling);
    install_hand_over_hooks();
    if (pthread_create(&g.thread, NULL, flush_main, NULL) != 0) {
        rs_collector_log("cannot start the flush thread; records are sent only at exit");
        return 0;
    }
    g.running = true;
    return 0;
}

/* After the final forced flush CUPTI has returned every buffer; ones that did not come back to
 * us went to a client that registered its own buffer callbacks after us (torch.profiler's Kineto,
 * a tool attached later), with the records in them, and ours stopped at that point. Said once on
 * stderr and to the server (docs/collector.md "torch.profiler in the same process"). */
static void
taken_over(void)
{
    size_t out = atomic_load(&g.buffers_out), back = atomic_load(&g.buffers_back);
    char text[200];

    if (back >= out)
        return;
    snprintf(text, sizeof text,
             "another CUPTI client (torch.profiler?) took the activity buffers: %zu of ours went "
             "to it, and collection stopped there",
             out - back);
    rs_collector_log("%s", text);
    pthread_mutex_lock(&g.lock);
    rs_convert_report(g.conv, RS_COLLECTOR_STEPPED_ASIDE, text);
    pthread_mutex_unlock(&g.lock);
}

static void
stop_flush_thread(void)
{
    if (!g.running)
        return;
    pthread_mutex_lock(&g.wake_lock);
    g.stopping = true;
    pthread_cond_signal(&g.wake);
    pthread_mutex_unlock(&g.wake_lock);
    pthread_join(g.thread, NULL);
    g.running = false;
}

/* Turns off every kind rs_activity_start turned on. */
static void
disable_kinds(void)
{
    for (size_t i = 0; i < N_ALWAYS_KINDS; i++)
        cuptiActivityDisable(always_kinds[i]);
    sync_stop(g.opts.sync);
    launch_wait_stop(g.opts.launch_wait);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MARKER);
}

/* Stops collection for good, once, whoever comes first: the process's exit (taken_by NULL) or
 * another CUPTI client about to subscribe or register its activity buffers (taken_by: the call
 * install_hand_over_hooks redirected here, on the client's thread). The flush thread and PC
 * sampling (which holds the subscription) stop, and a forced flush brings every buffer of ours
 * back, also ones with records still in flight. At exit, buffers that did not come back went to
 * a client we did not hear of (taken_over). At a hand-over our kinds are turned off first, and
 * CUPTI, once the client's call goes on, is all its own — else CUPTI would hand it the buffers we
 * had given CUPTI, records of its own included, and it would drop them. Said once on stderr and
 * to the server (stepped_aside). */
static void
stop_collection(const char *taken_by)
{
    pthread_mutex_lock(&g.stop_lock);
    if (!g.stopped && g.conv) {
        g.stopped = true;
        stop_flush_thread();
        rs_pcsampling_finish();
        rs_attach_lock();
        if (rs_attach_state() != RS_DETACHED) /* a subscription of ours ends (attach.h) */
            rs_attach_attach(buffer_requested, buffer_completed);
        /* detached: nothing of ours in CUPTI, and a call would attach it again */
        bool attached = rs_attach_state() == RS_ATTACHED;
        if (taken_by && attached)
            disable_kinds();
        if (attached)
            cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        if (taken_by) {
            char text[200];
            snprintf(text, sizeof text,
                     "another CUPTI client (torch.profiler?) called %s: rankscope handed CUPTI "
                     "over and stopped collecting in this process",
                     taken_by);
            rs_collector_log("%s", text);
            pthread_mutex_lock(&g.lock);
            rs_convert_report(g.conv, RS_COLLECTOR_STEPPED_ASIDE, text);
            pthread_mutex_unlock(&g.lock);
        } else {
            taken_over();
        }
        pthread_mutex_lock(&g.lock);
        rs_capture_finish(g.conv); /* a capture running to the end is reported done */
        pthread_mutex_unlock(&g.lock);
        send_converted(true);
        rs_attach_unlock();
    }
    pthread_mutex_unlock(&g.stop_lock);
}

void
rs_activity_finish(void)
{
    stop_collection(NULL);
}

static CUptiResult CUPTIAPI
other_register_callbacks(CUpti_BuffersCallbackRequestFunc requested,
                         CUpti_BuffersCallbackCompleteFunc completed)
{
    stop_collection("cuptiActivityRegisterCallbacks");
    return cuptiActivityRegisterCallbacks(requested, completed);
}

static CUptiResult CUPTIAPI
other_subscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata)
{
    stop_collection("cuptiSubscribe");
    return cuptiSubscribe(subscriber, callback, userdata);
}

static CUptiResult CUPTIAPI
other_subscribe_v2(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata,
                   CUpti_SubscriberParams *params)
{
    stop_collection("cuptiSubscribe_v2");
    return cuptiSubscribe_v2(subscriber, callback, userdata, params);
}

/* Redirects the other libraries' calls that take CUPTI over to stop_collection first
 * (got_hook.h).
 * Only libraries loaded by now: in a PyTorch job, torch's own (Kineto) are, since CUDA starts
 * after `import torch`. A client in a library loaded later still takes the buffers the old way;
 * the exit check (taken_over) reports that. */
static void
install_hand_over_hooks(void)
{
    const struct rs_got_redirect redirects[] = {
        {"cuptiActivityRegisterCallbacks", (void *)other_register_callbacks,
         (const void *)cuptiActivityRegisterCallbacks},
        {"cuptiSubscribe", (void *)other_subscribe, (const void *)cuptiSubscribe},
        {"cuptiSubscribe_v2", (void *)other_subscribe_v2, (const void *)cuptiSubscribe_v2}};
    size_t n = rs_got_hook(redirects, sizeof redirects / sizeof redirects[0]);
    if (g.opts.log_hooks)
        rs_collector_log("hand-over hooks: %zu call sites of other libraries redirected", n);
}

void
rs_activity_get_window_stats(struct rs_activity_window_stats *out)
{
    pthread_mutex_lock(&g.lock);
    *out = g.window_stats;
    pthread_mutex_unlock(&g.lock);
}

void
rs_activity_abandon(void)
{
    g.running = false;
    g.conv = NULL;
}
