/* Unit tests of PC sampling's windows and drains (node-agent/collector/pcsampling.c) against a
 * stand-in CUPTI and driver defined here: the calls it makes, in order, at context creation, at
 * kernel launches and at the end; windows of a few milliseconds on the real clock. Each case
 * runs in a child process (pcsampling.c keeps one state per process, as the collector does). */
#include "node-agent/collector/convert.h"
#include "node-agent/collector/pcsampling.h"
#include "tests/t.h"

#include <cuda.h>
#include <cupti.h>
#include <cupti_pcsampling.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- the stand-ins: every call is appended to `calls`, one letter each ------------------------
 */
static char calls[256];
static size_t n_calls;
static CUpti_CallbackFunc subscriber;
static bool launches_enabled, serialized, start_stop;
static CUptiResult start_result = CUPTI_SUCCESS;
static int pcs_ready; /* PCs the next GetData returns (then 0) */

static void
call(char c)
{
    if (n_calls + 1 < sizeof calls)
        calls[n_calls++] = c;
}

CUptiResult
cuptiSubscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc f, void *u)
{
    (void)u;
    *s = (CUpti_SubscriberHandle)&subscriber;
    subscriber = f;
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiUnsubscribe(CUpti_SubscriberHandle s)
{
    (void)s;
    subscriber = NULL;
    call('u');
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiEnableCallback(uint32_t on, CUpti_SubscriberHandle s, CUpti_CallbackDomain d,
                    CUpti_CallbackId cbid)
{
    (void)s;
    if (on && d == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel)
        launches_enabled = true;
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiGetResultString(CUptiResult r, const char **text)
{
    (void)r;
    *text = "stand-in error";
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiPCSamplingEnable(CUpti_PCSamplingEnableParams *p)
{
    (void)p;
    call('E');
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiPCSamplingDisable(CUpti_PCSamplingDisableParams *p)
{
    (void)p;
    call('D');
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiPCSamplingStart(CUpti_PCSamplingStartParams *p)
{
    (void)p;
    call('S');
    return start_result;
}

CUptiResult
cuptiPCSamplingStop(CUpti_PCSamplingStopParams *p)
{
    (void)p;
    call('T');
    pcs_ready = 2; /* a window's samples, flushed by the stop */
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiPCSamplingGetData(CUpti_PCSamplingGetDataParams *p)
{
    CUpti_PCSamplingData *d = p->pcSamplingData;
    static char name[] = "gemm";

    call('G');
    d->totalNumPcs = (size_t)pcs_ready;
    d->remainingNumPcs = 0;
    for (int i = 0; i < pcs_ready; i++) {
        d->pPcData[i].functionName = strdup(name);
        d->pPcData[i].pcOffset = (uint64_t)i * 16;
        d->pPcData[i].stallReasonCount = 1;
        d->pPcData[i].stallReason[0].pcSamplingStallReasonIndex = 7;
        d->pPcData[i].stallReason[0].samples = 5;
    }
    pcs_ready = 0;
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiPCSamplingGetNumStallReasons(CUpti_PCSamplingGetNumStallReasonsParams *p)
{
    *p->numStallReasons = 1;
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiPCSamplingGetStallReasons(CUpti_PCSamplingGetStallReasonsParams *p)
{
    p->stallReasonIndex[0] = 7;
    strcpy(p->stallReasons[0], "smsp__pcsamp_warps_issue_stalled_long_scoreboard");
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiPCSamplingSetConfigurationAttribute(CUpti_PCSamplingConfigurationInfoParams *p)
{
    for (size_t i = 0; i < p->numAttributes; i++) {
        const CUpti_PCSamplingConfigurationInfo *a = &p->pPCSamplingConfigurationInfo[i];
        if (a->attributeType == CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE)
            serialized = a->attributeData.collectionModeData.collectionMode ==
                         CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED;
        if (a->attributeType == CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL)
            start_stop = a->attributeData.enableStartStopControlData.enableStartStopControl;
    }
    return CUPTI_SUCCESS;
}

/* the driver, found by pcsampling.c in the process's global symbols (linked with -rdynamic) */
CUresult cuCtxPushCurrent_v2(CUcontext ctx);
CUresult cuCtxPopCurrent_v2(CUcontext *ctx);
CUresult cuCtxSynchronize(void);

CUresult
cuCtxPushCurrent_v2(CUcontext ctx)
{
    (void)ctx;
    return CUDA_SUCCESS;
}

CUresult
cuCtxPopCurrent_v2(CUcontext *ctx)
{
    *ctx = NULL;
    return CUDA_SUCCESS;
}

CUresult
cuCtxSynchronize(void)
{
    call('y');
    return CUDA_SUCCESS;
}

/* ---- the process CUPTI would drive ----------------------------------------------------------- */
static int ctx_storage;
#define CTX ((CUcontext)&ctx_storage)

static void
context_created(void)
{
    CUpti_ResourceData rd = {.context = CTX};
    subscriber(NULL, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &rd);
}

static void
launch(CUpti_ApiCallbackSite site, CUcontext ctx)
{
    CUpti_CallbackData cb = {.callbackSite = site, .context = ctx};
    subscriber(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &cb);
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

static rs_convert *
converter(void)
{
    struct rs_env_identity id = {.job = "job-pc", .world_size = 1, .host = "h", .pid = 1};
    struct rs_convert_options opts = {"/nonexistent/agent.sock", NULL, NULL};
    rs_convert *c = NULL;
    CUpti_ActivityKernel10 k = {
        .kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, .name = "gemm", .start = 1, .end = 2};
    T_EQ(rs_convert_new(&id, &opts, &c), 0);
    if (c)
        rs_convert_record(c, (const CUpti_Activity *)&k); /* stalls go to the last kernel's GPU */
    return c;
}

static uint64_t
stalls(rs_convert *c)
{
    struct rs_convert_stats st;
    rs_convert_get_stats(c, &st);
    return st.stalls;
}

/* ---- cases ----------------------------------------------------------------------------------- */
/* Windows of 40 ms every 300 ms: serialized start/stop mode; a window opens at a launch's entry
 * after a synchronize, closes at the first launch's exit after its end with a drain, and the
 * next one waits for the period. */
static void
windows_open_and_close_at_launches(void)
{
    rs_convert *c = converter();
    struct rs_pcsampling_options o = {.window_ms = 40, .period_ms = 300, .drain_ms = 60000};

    T_EQ(rs_pcsampling_start(c, &conv_lock, &o), 0);
    T_CHECK(launches_enabled);
    context_created();
    T_CHECK(serialized && start_stop);
    T_CHECK(strcmp(calls, "E") == 0);
    launch(CUPTI_API_ENTER, CTX);
    T_CHECK(strcmp(calls, "EyS") == 0); /* synchronize, then start */
    launch(CUPTI_API_EXIT, CTX);
    launch_both(); /* inside the window: nothing */
    T_CHECK(strcmp(calls, "EyS") == 0);
    T_EQ(stalls(c), 0);
    sleep_ms(50);
    launch(CUPTI_API_ENTER, CTX); /* a window closes at an exit, not an entry */
    T_CHECK(strcmp(calls, "EyS") == 0);
    launch(CUPTI_API_EXIT, CTX);
    T_CHECK(strcmp(calls, "EySTG") == 0); /* stop, drain */
    T_EQ(stalls(c), 2);
    launch_both(); /* before the period's end: closed */
    T_CHECK(strcmp(calls, "EySTG") == 0);
    sleep_ms(260);
    launch(CUPTI_API_ENTER, (CUcontext)&calls); /* another context's launch: left alone */
    T_CHECK(strcmp(calls, "EySTG") == 0);
    launch(CUPTI_API_ENTER, CTX);
    T_CHECK(strcmp(calls, "EySTGyS") == 0);
    rs_pcsampling_finish(); /* closes the open window, drains, turns sampling off */
    T_CHECK(strcmp(calls, "EySTGySTGDu") == 0);
    T_EQ(stalls(c), 4);
    rs_convert_free(c);
}

/* The flush thread's ticks drain every drain_ms and never open or close a window. */
static void
ticks_drain_only(void)
{
    rs_convert *c = converter();
    struct rs_pcsampling_options o = {.window_ms = 1000, .period_ms = 60000, .drain_ms = 100};

    T_EQ(rs_pcsampling_start(c, &conv_lock, &o), 0);
    context_created();
    rs_pcsampling_tick(1000000000ull);
    rs_pcsampling_tick(1050000000ull); /* within drain_ms of the last: nothing */
    rs_pcsampling_tick(1100000000ull);
    T_CHECK(strcmp(calls, "EGG") == 0);
    rs_pcsampling_finish(); /* no window open: no stop */
    T_CHECK(strcmp(calls, "EGGGDu") == 0);
    rs_convert_free(c);
}

/* window_ms 0: continuous mode for the whole run, launches not even subscribed. */
static void
whole_run_without_windows(void)
{
    rs_convert *c = converter();
    struct rs_pcsampling_options o = {.window_ms = 0, .period_ms = 0, .drain_ms = 100};

    T_EQ(rs_pcsampling_start(c, &conv_lock, &o), 0);
    T_CHECK(!launches_enabled);
    context_created();
    T_CHECK(!serialized && !start_stop);
    rs_pcsampling_finish();
    T_CHECK(strcmp(calls, "EGDu") == 0);
    rs_convert_free(c);
}

/* A start CUPTI refuses turns PC sampling off for the process: no more windows, no drains. */
static void
refused_start_gives_up(void)
{
    rs_convert *c = converter();
    struct rs_pcsampling_options o = {.window_ms = 10, .period_ms = 10, .drain_ms = 100};

    start_result = CUPTI_ERROR_INVALID_OPERATION;
    T_EQ(rs_pcsampling_start(c, &conv_lock, &o), 0);
    context_created();
    launch_both();
    T_CHECK(strcmp(calls, "EyS") == 0);
    sleep_ms(20);
    launch_both();
    rs_pcsampling_tick(UINT64_MAX / 2);
    rs_pcsampling_finish();
    T_CHECK(strcmp(calls, "EySu") == 0);
    rs_convert_free(c);
}

/* Runs a case in a child: pcsampling.c's state is the process's. */
static void
isolated(void (*fn)(void))
{
    pid_t pid = fork();
    int status = 0;

    if (pid == 0) {
        t_current_failed = 0;
        fn();
        if (t_current_failed)
            fprintf(stderr, "  calls: %s\n", calls);
        _exit(t_current_failed ? 1 : 0);
    }
    T_CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

#define T_RUN_ISOLATED(fn) T_RUN_CALL(#fn, isolated(fn))

int
main(void)
{
    T_RUN_ISOLATED(windows_open_and_close_at_launches);
    T_RUN_ISOLATED(ticks_drain_only);
    T_RUN_ISOLATED(whole_run_without_windows);
    T_RUN_ISOLATED(refused_start_gives_up);
    return T_DONE("collector/pcsampling");
}
