/* Unit tests of PC sampling's windows and drains (node-agent/collector/pcsampling.c) against the
 * stand-in CUPTI and driver (fake_cupti.h): the calls it makes, in order, at context creation, at
 * kernel launches and at the end; windows of a few milliseconds on the real clock. Each case
 * runs in a child process (t_isolated.h: pcsampling.c keeps one state per process, as the
 * collector does). */
#include "node-agent/collector/convert.h"
#include "node-agent/collector/pcsampling.h"
#include "tests/t.h"
#include "tests/t_isolated.h"
#include "tests/unit/collector/fake_cupti.h"
#include "tests/unit/collector/t_convert.h"

#include <cuda.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- the process CUPTI would drive ----------------------------------------------------------- */
static int ctx_storage;
#define CTX ((CUcontext)&ctx_storage)

static void
context_created(void)
{
    CUpti_ResourceData rd = {.context = CTX};
    fake_cupti_subscriber()(NULL, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED,
                            &rd);
}

static void
launch(CUpti_ApiCallbackSite site, CUcontext ctx)
{
    CUpti_CallbackData cb = {.callbackSite = site, .context = ctx};
    fake_cupti_subscriber()(NULL, CUPTI_CB_DOMAIN_DRIVER_API,
                            CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &cb);
}

static void
launch_both(void)
{
    launch(CUPTI_API_ENTER, CTX);
    launch(CUPTI_API_EXIT, CTX);
}

static void
sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static pthread_mutex_t conv_lock = PTHREAD_MUTEX_INITIALIZER;

/* A converter whose stalls have a GPU to go to (the last kernel's). */
static rs_convert *
converter(void)
{
    rs_convert *c = t_converter();
    CUpti_ActivityKernel10 k = {
        .kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, .name = "gemm", .start = 1, .end = 2};
    if (c)
        rs_convert_record(c, (const CUpti_Activity *)&k);
    return c;
}

/* ---- cases ----------------------------------------------------------------------------------- */
/* Windows of 200 ms every 1.5 s (long enough that a loaded machine does not end a window between
 * two calls that must fall inside it): serialized start/stop mode; a window opens at a launch's entry
 * after a synchronize, closes at the first launch's exit after its end with a drain, and the
 * next one waits for the period. */
static void
windows_open_and_close_at_launches(void)
{
    rs_convert *c = converter();
    struct rs_pcsampling_options o = {.window_ms = 200, .period_ms = 1500, .drain_ms = 60000};

    T_OK(rs_pcsampling_start(c, &conv_lock, &o));
    T_CHECK(fake_cupti_launches_subscribed);
    context_created();
    T_CHECK(fake_cupti_serialized && fake_cupti_start_stop);
    T_CHECK(strcmp(fake_cupti_log(), "sE") == 0);
    launch(CUPTI_API_ENTER, CTX);
    T_CHECK(strcmp(fake_cupti_log(), "sEyS") == 0); /* synchronize, then start */
    launch(CUPTI_API_EXIT, CTX);
    launch_both(); /* inside the window: nothing */
    T_CHECK(strcmp(fake_cupti_log(), "sEyS") == 0);
    T_EQ(t_convert_stats(c).stalls, 0);
    sleep_ms(250);
    launch(CUPTI_API_ENTER, CTX); /* a window closes at an exit, not an entry */
    T_CHECK(strcmp(fake_cupti_log(), "sEyS") == 0);
    launch(CUPTI_API_EXIT, CTX);
    T_CHECK(strcmp(fake_cupti_log(), "sEySTG") == 0); /* stop, drain */
    T_EQ(t_convert_stats(c).stalls, 2);
    launch_both(); /* before the period's end: closed */
    T_CHECK(strcmp(fake_cupti_log(), "sEySTG") == 0);
    sleep_ms(1300);
    launch(CUPTI_API_ENTER, (CUcontext)&conv_lock); /* another context's launch: left alone */
    T_CHECK(strcmp(fake_cupti_log(), "sEySTG") == 0);
    launch(CUPTI_API_ENTER, CTX);
    T_CHECK(strcmp(fake_cupti_log(), "sEySTGyS") == 0);
    rs_pcsampling_finish(); /* closes the open window, drains, turns sampling off */
    T_CHECK(strcmp(fake_cupti_log(), "sEySTGySTGDu") == 0);
    T_EQ(t_convert_stats(c).stalls, 4);
    rs_convert_free(c);
}

/* The flush thread's ticks drain every drain_ms and never open or close a window. */
static void
ticks_drain_only(void)
{
    rs_convert *c = converter();
    struct rs_pcsampling_options o = {.window_ms = 1000, .period_ms = 60000, .drain_ms = 100};

    T_OK(rs_pcsampling_start(c, &conv_lock, &o));
    context_created();
    rs_pcsampling_tick(1000000000ull);
    rs_pcsampling_tick(1050000000ull); /* within drain_ms of the last: nothing */
    rs_pcsampling_tick(1100000000ull);
    T_CHECK(strcmp(fake_cupti_log(), "sEGG") == 0);
    rs_pcsampling_finish(); /* no window open: no stop */
    T_CHECK(strcmp(fake_cupti_log(), "sEGGGDu") == 0);
    rs_convert_free(c);
}

/* window_ms 0: continuous mode for the whole run, launches not even subscribed. */
static void
whole_run_without_windows(void)
{
    rs_convert *c = converter();
    struct rs_pcsampling_options o = {.window_ms = 0, .period_ms = 0, .drain_ms = 100};

    T_OK(rs_pcsampling_start(c, &conv_lock, &o));
    T_CHECK(!fake_cupti_launches_subscribed);
    context_created();
    T_CHECK(!fake_cupti_serialized && !fake_cupti_start_stop);
    rs_pcsampling_finish();
    T_CHECK(strcmp(fake_cupti_log(), "sEGDu") == 0);
    rs_convert_free(c);
}

/* A start CUPTI refuses turns PC sampling off for the process: no more windows, no drains. */
static void
refused_start_gives_up(void)
{
    rs_convert *c = converter();
    struct rs_pcsampling_options o = {.window_ms = 10, .period_ms = 10, .drain_ms = 100};

    fake_cupti_start_result = CUPTI_ERROR_INVALID_OPERATION;
    T_OK(rs_pcsampling_start(c, &conv_lock, &o));
    context_created();
    launch_both();
    T_CHECK(strcmp(fake_cupti_log(), "sEyS") == 0);
    sleep_ms(20);
    launch_both();
    rs_pcsampling_tick(UINT64_MAX / 2);
    rs_pcsampling_finish();
    T_CHECK(strcmp(fake_cupti_log(), "sEySu") == 0);
    T_CHECK(strstr(t_said(), "PC sampling is off in this process: cuptiPCSamplingStart") != NULL);
    rs_convert_free(c);
}

/* A capture's window (rs_pcsampling_capture, from the flush thread without PC sampling's lock):
 * it opens at the next launch's entry whatever the period says, lasts the capture's seconds, and
 * is pending until it closed and was drained — the capture's mark stays on the frames until then
 * (capture_run.h). A capture while a window is open extends it. */
static void
capture_window_pending_until_drained(void)
{
    rs_convert *c = converter();
    struct rs_pcsampling_options o = {.window_ms = 40, .period_ms = 600000, .drain_ms = 600000};
    char why[200] = "";

    T_OK(rs_pcsampling_start(c, &conv_lock, &o));
    context_created();
    launch_both(); /* the first window, by the schedule */
    sleep_ms(50);
    launch_both();
    T_CHECK(strcmp(fake_cupti_log(), "sEySTG") == 0);
    T_CHECK(!rs_pcsampling_capture_pending());
    T_EQ(rs_pcsampling_capture(1, why, sizeof why), 0);
    T_CHECK(rs_pcsampling_capture_pending());
    launch(CUPTI_API_ENTER, CTX); /* long before the period's end: the capture's window opens */
    T_CHECK(strcmp(fake_cupti_log(), "sEySTGyS") == 0);
    launch(CUPTI_API_EXIT, CTX);
    sleep_ms(100);
    launch_both(); /* 40 ms is not the capture's 1 s: still open */
    T_CHECK(strcmp(fake_cupti_log(), "sEySTGyS") == 0);
    T_CHECK(rs_pcsampling_capture_pending());
    T_EQ(rs_pcsampling_capture(2, why, sizeof why), 0); /* a second one extends it to 2 s on */
    launch_both();
    sleep_ms(1000); /* past the first one's end */
    launch_both();
    T_CHECK(strcmp(fake_cupti_log(), "sEySTGyS") == 0);
    T_CHECK(rs_pcsampling_capture_pending());
    sleep_ms(1150);
    launch_both();
    T_CHECK(strcmp(fake_cupti_log(), "sEySTGySTG") == 0); /* closed and drained */
    T_CHECK(!rs_pcsampling_capture_pending());
    T_EQ(t_convert_stats(c).stalls, 4);
    rs_pcsampling_finish();
    rs_convert_free(c);
}

/* Without PC sampling at the start a capture's part fails, saying why, and nothing is pending. */
static void
capture_without_pc_sampling(void)
{
    char why[200] = "";

    T_EQ(rs_pcsampling_capture(5, why, sizeof why), -1);
    T_CHECK(strstr(why, "RANKSCOPE_PC_SAMPLING=1") != NULL);
    T_CHECK(!rs_pcsampling_capture_pending());
}

int
main(void)
{
    t_isolated_context = fake_cupti_log;
    T_RUN_ISOLATED(windows_open_and_close_at_launches);
    T_RUN_ISOLATED(capture_window_pending_until_drained);
    T_RUN_ISOLATED(capture_without_pc_sampling);
    T_RUN_ISOLATED(ticks_drain_only);
    T_RUN_ISOLATED(whole_run_without_windows);
    T_RUN_ISOLATED(refused_start_gives_up);
    t_isolated_done();
    return T_DONE("collector/pcsampling");
}
