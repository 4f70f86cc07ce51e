/* librankscope.so's entry point: CUDA_INJECTION64_PATH=/path/librankscope.so makes the CUDA
 * driver call InitializeInjection() once per process during cuInit. We read the identity, check
 * the CUPTI version, step aside if another CUPTI client already holds CUPTI, start activity
 * collection, and arrange a final flush at exit — guarded by pid, so a fork()ed child (PyTorch
 * DataLoader workers) stays inert and never touches CUPTI or the agent socket.
 * Environment: RANKSCOPE_DISABLE=1 (kill switch), RANKSCOPE_AGENT_SOCKET (default
 * /tmp/rankscope-agent.sock), RANKSCOPE_FLUSH_MS (default 250), RANKSCOPE_BUFFER_KB (CUPTI buffer
 * size, default 4096), RANKSCOPE_STEP_RANGE (an NVTX range name marking steps, besides
 * "ProfilerStep#N"), RANKSCOPE_SYNC (host synchronization records: api, the default, the
 * synchronizing driver calls; 1 CUPTI's SYNCHRONIZATION kind; 0 none; activity.h),
 * RANKSCOPE_LAUNCH_WAIT (launch waits, launch_wait.h: api, the default, queue times from
 * driver-API records of the launch calls; latency, from CUPTI's latency timestamps; 0 none;
 * activity.h), RANKSCOPE_PC_SAMPLING=1 and its options (pcsampling.h), RANKSCOPE_HOOK_DEBUG=1
 * (say how many call sites of other CUPTI clients the hand-over redirected: activity.h),
 * RANKSCOPE_DEBUG=1 (counts of what was converted, on stderr at exit), identity variables
 * (identity.h). NVTX_INJECTION64_PATH=this library forwards NVTX to CUPTI
 * (InitializeInjectionNvtx2 below). */
#include "node-agent/collector/activity.h"
#include "node-agent/collector/convert.h"
#include "node-agent/collector/identity.h"
#include "node-agent/collector/log.h"

#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_SOCKET "/tmp/rankscope-agent.sock"
#define DEFAULT_FLUSH_MS 250
/* Driver-API records of the synchronizing calls: measured on H200 (docs/BENCHMARKS.md, runs N - P),
 * CUPTI's SYNCHRONIZATION kind cost 0.2 - 0.4 us more per kernel launch than no sync records and
 * counted 17.5 Event Syncs per step for 2.1 cuEventSynchronize calls; these gave the same wait
 * times and cost 0.92 us per launch against 0.97 without sync records in one run, 1.11 against
 * 0.61 in another (wide ranges: not clearly more, not clearly the same). */
#define DEFAULT_SYNC RS_ACTIVITY_SYNC_API
/* 4 MiB CUPTI buffers: measured on 2 x H200 (docs/BENCHMARKS.md), 64 KiB buffers cost 1.6 us per
 * kernel launch instead of 0.7 (more buffer requests on the launching thread) and did not help
 * torch.profiler in the same process either. */
#define DEFAULT_BUFFER_KB 4096
/* PC-sampling windows (pcsampling.h) of 1 s a minute: stall data every minute at a duty cycle of
 * 1.7%. Kernels run one at a time inside a window: on 2 x H200 windows of 500 ms every 2 s (25%)
 * left the DDP job's median step time at 1.0038 x but raised its mean 1.18 x (docs/BENCHMARKS.md).
 */
#define DEFAULT_PC_WINDOW_MS 1000
#define DEFAULT_PC_PERIOD_MS 60000
/* Launch waits settle at least 4 flush periods (and 1 s) behind the newest GPU work
 * (launch_wait.h): a kernel's record comes within about a flush period of its end. */
#define LAUNCH_WAIT_LAG_FLUSHES 4
/* Queue times from driver-API records of the launch calls: on 2 x H200 the DDP job's median step
 * took 1.0019 x with them and 1.0021 x with launch waits off, same rounds; CUPTI's latency
 * timestamps cost it 1.0115 x against 1.0038 x (docs/BENCHMARKS.md "Launch waits"). */
#define DEFAULT_LAUNCH_WAIT RS_ACTIVITY_LAUNCH_WAIT_API
#define LAUNCH_WAIT_MIN_LAG_MS 1000

static struct {
    pthread_once_t once;
    pid_t pid; /* the process that initialised; 0 = not collecting */
    rs_convert *conv;
} state = {.once = PTHREAD_ONCE_INIT};

static const char *
env(const char *name)
{
    return getenv(name);
}

/* An integer setting from the environment, or `fallback` when absent or outside [lo, hi]. */
static long
env_long(const char *name, long lo, long hi, long fallback)
{
    const char *v = env(name);
    char *end;
    long n = v ? strtol(v, &end, 10) : 0;

    return v && *v && *end == '\0' && n >= lo && n <= hi ? n : fallback;
}

/* A switch from the environment: set, not empty and not "0". */
static bool
env_flag(const char *name)
{
    const char *v = env(name);
    return v && *v && strcmp(v, "0") != 0;
}

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);
static cxa_demangle_fn cxa_demangle;

/* C++ names through the C++ runtime the training process already has, when it has one. */
static char *
demangle(const char *mangled)
{
    int status = 0;
    char *out;

    if (!cxa_demangle || strncmp(mangled, "_Z", 2) != 0)
        return NULL;
    out = cxa_demangle(mangled, NULL, NULL, &status);
    if (status != 0) {
        free(out);
        return NULL;
    }
    return out;
}

/* RANKSCOPE_DEBUG=1: what this process converted, once at exit. */
static void
log_stats(void)
{
    struct rs_convert_stats st;

    rs_convert_get_stats(state.conv, &st);
    rs_collector_log("converted %llu kernels, %llu collectives, %llu memcpys, %llu memsets, %llu "
                     "host syncs, %llu launch calls, %llu steps, %llu stall counts; %llu untimed, "
                     "%llu CUPTI dropped",
                     (unsigned long long)st.kernels, (unsigned long long)st.collectives,
                     (unsigned long long)st.memcpys, (unsigned long long)st.memsets,
                     (unsigned long long)st.syncs, (unsigned long long)st.launch_calls,
                     (unsigned long long)st.steps, (unsigned long long)st.stalls,
                     (unsigned long long)st.untimed, (unsigned long long)st.cupti_dropped);
    rs_collector_log(
        "launch waits: %llu, %.3f ms in all; %llu intervals without a queue time, "
        "%llu late, %llu forced settles, %llu refused",
        (unsigned long long)st.launch_wait.waits, st.launch_wait.wait_ns / 1e6,
        (unsigned long long)st.launch_wait.unqueued, (unsigned long long)st.launch_wait.late,
        (unsigned long long)st.launch_wait.forced, (unsigned long long)st.launch_wait.refused);
}

static void
at_exit(void)
{
    if (state.pid != getpid() || !state.conv)
        return; /* a forked child, or nothing started */
    rs_activity_finish();
    if (env_flag("RANKSCOPE_DEBUG"))
        log_stats();
}

static void
in_forked_child(void)
{
    /* The flush thread was not copied; CUPTI's state in the child is not ours to use. */
    rs_activity_abandon();
    state.pid = 0;
}

/* True when the CUPTI library at run time is the one our headers describe (same major.minor);
 * otherwise `why` says what is wrong. */
static bool
version_ok(char *why, size_t len)
{
    uint32_t version = 0;

    if (cuptiGetVersion(&version) != CUPTI_SUCCESS) {
        snprintf(why, len, "cuptiGetVersion failed; collection is off");
        return false;
    }
    if (version / 100 != CUPTI_API_VERSION / 100) {
        snprintf(why, len,
                 "CUPTI API %u at run time, built for %u; collection is off (record layouts "
                 "differ between versions)",
                 version, (unsigned)CUPTI_API_VERSION);
        return false;
    }
    return true;
}

static void CUPTIAPI
ignore_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                const void *data)
{
}

/* CUPTI serves one subscriber. If Nsight, torch.profiler (Kineto) or compute-sanitizer already
 * holds it, they win and we stay out of the way. We do not keep the subscription ourselves, so a
 * profiler started later can still take it. */
static bool
cupti_free(char *why, size_t len)
{
    CUpti_SubscriberHandle sub;
    char holder[128] = "";
    CUpti_SubscriberParams params = {CUpti_SubscriberParams_STRUCT_SIZE, "rankscope", holder,
                                     sizeof holder};
    CUptiResult rc = cuptiSubscribe_v2(&sub, ignore_callback, NULL, &params);

    if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        snprintf(why, len, "CUPTI is in use by %s; rankscope steps aside in this process",
                 holder[0] ? holder : "another tool");
        return false;
    }
    if (rc == CUPTI_SUCCESS)
        cuptiUnsubscribe(sub);
    return true;
}

/* One value of a setting that names a choice. */
struct env_choice {
    const char *text;
    int value;
};

/* The value of the choice the environment variable `name` names, or `fallback` when it is absent
 * or names none. */
static int
env_choice(const char *name, const struct env_choice *choices, size_t n, int fallback)
{
    const char *v = env(name);

    for (size_t i = 0; v && i < n; i++)
        if (strcmp(v, choices[i].text) == 0)
            return choices[i].value;
    return fallback;
}

/* RANKSCOPE_SYNC: "0", "1" or "api". */
static enum rs_activity_sync
sync_option(void)
{
    static const struct env_choice choices[] = {{"0", RS_ACTIVITY_SYNC_OFF},
                                                {"1", RS_ACTIVITY_SYNC_RECORDS},
                                                {"api", RS_ACTIVITY_SYNC_API}};
    return (enum rs_activity_sync)env_choice("RANKSCOPE_SYNC", choices,
                                             sizeof choices / sizeof choices[0], DEFAULT_SYNC);
}

/* RANKSCOPE_PC_* (pcsampling.h); false when PC sampling is not asked for. */
static bool
pc_sampling_options(struct rs_pcsampling_options *o)
{
    o->debug = env_flag("RANKSCOPE_PC_DEBUG");
    o->window_ms = (unsigned)env_long("RANKSCOPE_PC_WINDOW_MS", 0, 600000, DEFAULT_PC_WINDOW_MS);
    o->period_ms =
        (unsigned)env_long("RANKSCOPE_PC_PERIOD_MS", 100, 86400000, DEFAULT_PC_PERIOD_MS);
    if (o->window_ms && o->window_ms < 100)
        o->window_ms = 100; /* each window costs a synchronize: shorter ones would be mostly that */
    if (o->period_ms < o->window_ms)
        o->period_ms = o->window_ms; /* a window per period at most: always on */
    o->drain_ms = (unsigned)env_long("RANKSCOPE_PC_DRAIN_MS", 100, 600000, 1000);
    o->sampling_period = (int)env_long("RANKSCOPE_PC_SAMPLING_PERIOD", 5, 31, 0);
    o->hw_buffer_mb = (unsigned)env_long("RANKSCOPE_PC_HW_BUFFER_MB", 16, 4096, 64);
    return env_flag("RANKSCOPE_PC_SAMPLING");
}

/* RANKSCOPE_LAUNCH_WAIT: "0", "api" or "latency". */
static enum rs_activity_launch_wait
launch_wait_option(void)
{
    static const struct env_choice choices[] = {{"0", RS_ACTIVITY_LAUNCH_WAIT_OFF},
                                                {"api", RS_ACTIVITY_LAUNCH_WAIT_API},
                                                {"latency", RS_ACTIVITY_LAUNCH_WAIT_LATENCY}};
    return (enum rs_activity_launch_wait)env_choice(
        "RANKSCOPE_LAUNCH_WAIT", choices, sizeof choices / sizeof choices[0], DEFAULT_LAUNCH_WAIT);
}

static uint64_t
launch_wait_lag_ns(unsigned flush_ms)
{
    uint64_t ms = (uint64_t)flush_ms * LAUNCH_WAIT_LAG_FLUSHES;
    return (ms > LAUNCH_WAIT_MIN_LAG_MS ? ms : LAUNCH_WAIT_MIN_LAG_MS) * 1000000u;
}

static void
initialize(void)
{
    struct rs_env_identity id;
    struct rs_pcsampling_options pc;
    struct rs_activity_options opts = {
        (unsigned)env_long("RANKSCOPE_FLUSH_MS", 10, 60000, DEFAULT_FLUSH_MS),
        (size_t)env_long("RANKSCOPE_BUFFER_KB", 16, 65536, DEFAULT_BUFFER_KB) << 10,
        pc_sampling_options(&pc) ? &pc : NULL,
        sync_option(),
        launch_wait_option(),
        env_flag("RANKSCOPE_HOOK_DEBUG")};
    const char *socket = env("RANKSCOPE_AGENT_SOCKET");
    char host[256] = "";

    char why[256] = "";
    uint32_t refusal = 0;

    if (env_flag("RANKSCOPE_DISABLE"))
        return; /* the kill switch: not even a log line */
    if (!version_ok(why, sizeof why))
        refusal = RS_COLLECTOR_VERSION_MISMATCH;
    else if (!cupti_free(why, sizeof why))
        refusal = RS_COLLECTOR_STEPPED_ASIDE;
    gethostname(host, sizeof host - 1);
    rs_identity_from_env(env, host, (uint32_t)getpid(), &id);
    /* Only a C++ runtime in the global scope: in PyTorch processes it is loaded privately, so
     * names stay mangled there. Reaching it by name (dlopen RTLD_NOLOAD) demangled them, but the
     * long template names then overflowed frames and records were dropped (measured on H200, run F
     * in docs/BENCHMARKS.md): demangling belongs off the training process. */
    cxa_demangle = (cxa_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    struct rs_convert_options copts = {
        socket && *socket ? socket : DEFAULT_SOCKET, demangle, env("RANKSCOPE_STEP_RANGE"),
        opts.launch_wait != RS_ACTIVITY_LAUNCH_WAIT_OFF ? launch_wait_lag_ns(opts.flush_ms) : 0};
    if (rs_convert_new(&id, &copts, &state.conv))
        return;
    if (!refusal && rs_activity_start(state.conv, &opts) != 0) {
        refusal = RS_COLLECTOR_CUPTI_ERROR;
        snprintf(why, sizeof why, "a CUPTI call failed at start; collection is off");
    }
    if (refusal) {
        /* Say so once here and once to the server (one frame, no records), then stay out. */
        struct rs_clock_pair none = {0, 0};
        if (refusal != RS_COLLECTOR_CUPTI_ERROR)
            rs_collector_log("%s", why);
        rs_convert_report(state.conv, refusal, why);
        rs_convert_flush(state.conv, &none, true);
        rs_convert_free(state.conv);
        state.conv = NULL;
        return;
    }
    state.pid = getpid();
    pthread_atfork(NULL, NULL, in_forked_child);
    atexit(at_exit);
}

/* NVTX reaches CUPTI through NVTX's own injection hook: NVTX_INJECTION64_PATH names a library
 * whose InitializeInjectionNvtx2 is called at the first NVTX call. libcupti has one; ours forwards
 * to it, so the same path serves CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH. */
typedef int (*nvtx_init_fn)(void *get_export_table);

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(void *get_export_table);

int
InitializeInjectionNvtx2(void *get_export_table)
{
    void *cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
    nvtx_init_fn init = cupti ? (nvtx_init_fn)dlsym(cupti, "InitializeInjectionNvtx2") : NULL;
    int rc = init ? init(get_export_table) : 0; /* 0: NVTX stays a no-op */

    if (cupti)
        dlclose(cupti); /* RTLD_NOLOAD took a reference of an already loaded library */
    return rc;
}

__attribute__((visibility("default"))) int InitializeInjection(void);

int
InitializeInjection(void)
{
    pthread_once(&state.once, initialize);
    return 1; /* never fail the application's cuInit */
}
