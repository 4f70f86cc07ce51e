/* librankscope.so's entry point: CUDA_INJECTION64_PATH=/path/librankscope.so makes the CUDA
 * driver call InitializeInjection() once per process during cuInit. We read the identity, check
 * the CUPTI version, step aside if another CUPTI client already holds CUPTI, start activity
 * collection, and arrange a final flush at exit — guarded by pid, so a fork()ed child (PyTorch
 * DataLoader workers) stays inert and never touches CUPTI or the agent socket.
 * Settings come from the environment (settings.h: RANKSCOPE_DISABLE, the kill switch, and the
 * others) and identity variables (identity.h). NVTX_INJECTION64_PATH=this library forwards NVTX
 * to CUPTI (InitializeInjectionNvtx2 below). */
#include "node-agent/collector/activity.h"
#include "node-agent/collector/attach.h"
#include "node-agent/collector/convert.h"
#include "node-agent/collector/identity.h"
#include "node-agent/collector/log.h"
#include "node-agent/collector/plugin.h"
#include "node-agent/collector/settings.h"

#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Launch waits settle at least 4 flush periods (and 1 s) behind the newest GPU work
 * (launch_wait.h): a kernel's record comes within about a flush period of its end. */
#define LAUNCH_WAIT_LAG_FLUSHES 4
#define LAUNCH_WAIT_MIN_LAG_MS 1000

__attribute__((visibility("default"))) int InitializeInjection(void);

static struct {
    pthread_once_t once;
    pid_t pid; /* the process that initialised; 0 = not collecting */
    rs_convert *conv;
    struct rs_collector_settings settings;
} state = {.once = PTHREAD_ONCE_INIT};

static const char *
env(const char *name)
{
    return getenv(name);
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

/* RANKSCOPE_DEBUG=1: when windows opened and closed and CUPTI was detached and attached again
 * (attach.h), eight events a line, CLOCK_REALTIME in ms. */
static void
log_timeline(void)
{
    static struct rs_attach_event ev[RS_ATTACH_EVENTS];
    size_t n = rs_attach_events(ev, RS_ATTACH_EVENTS);

    for (size_t i = 0; i < n; i += 8) {
        char line[400];
        size_t len = 0;
        for (size_t j = i; j < n && j < i + 8 && len < sizeof line; j++)
            len += (size_t)snprintf(line + len, sizeof line - len, " %c %.1f", ev[j].what,
                                    (double)ev[j].realtime_ns / 1e6);
        rs_collector_log("CUPTI timeline:%s", line);
    }
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
    struct rs_activity_window_stats ws;
    rs_activity_get_window_stats(&ws);
    if (ws.opened)
        rs_collector_log("kernel windows: %llu opened (%.1f us each to turn tracing on), %llu "
                         "closed (%.1f us each to turn it off)",
                         (unsigned long long)ws.opened,
                         (double)ws.open_ns / (double)ws.opened / 1e3,
                         (unsigned long long)ws.closed,
                         ws.closed ? (double)ws.close_ns / (double)ws.closed / 1e3 : 0.0);
    struct rs_attach_stats as;
    rs_attach_get_stats(&as);
    if (as.detaches || as.refused)
        rs_collector_log("CUPTI between windows: %llu detaches (%.1f ms each from asked to done, "
                         "cuptiFinalize %.3f ms of an application thread), %llu attaches (%.1f ms "
                         "each), %llu called off, %llu refused",
                         (unsigned long long)as.detaches,
                         as.detaches ? (double)as.detach_wait_ns / (double)as.detaches / 1e6 : 0.0,
                         as.detaches ? (double)as.finalize_ns / (double)as.detaches / 1e6 : 0.0,
                         (unsigned long long)as.attaches,
                         as.attaches ? (double)as.attach_ns / (double)as.attaches / 1e6 : 0.0,
                         (unsigned long long)as.cancelled, (unsigned long long)as.refused);
    log_timeline();
    struct rs_plugin_stats ps;
    rs_plugin_get_stats(&ps);
    if (ps.comms || ps.comms_refused)
        rs_collector_log(
            "NCCL plugin: %llu communicators (%llu refused), %llu operations (%llu dropped, "
            "%llu abandoned), %llu kernel-channel events, %llu other events, %llu strays; %llu "
            "handed over (%llu without GPU times), %llu sent, %llu NCCL kernels left to it; "
            "GPU clock offset %lld ns",
            (unsigned long long)ps.comms, (unsigned long long)ps.comms_refused,
            (unsigned long long)ps.ops, (unsigned long long)ps.dropped,
            (unsigned long long)ps.abandoned, (unsigned long long)ps.channel_events,
            (unsigned long long)ps.other_events, (unsigned long long)ps.stray,
            (unsigned long long)ps.drained, (unsigned long long)ps.host_only,
            (unsigned long long)st.plugin_ops, (unsigned long long)st.nccl_kernels_skipped,
            (long long)ps.gpu_offset_ns);
}

static void
at_exit(void)
{
    if (state.pid != getpid() || !state.conv)
        return; /* a forked child, or nothing started */
    rs_activity_finish();
    if (state.settings.debug)
        log_stats();
}

static void
in_forked_child(void)
{
    /* The flush thread was not copied; CUPTI's state in the child is not ours to use. */
    rs_activity_abandon();
    rs_plugin_disarm(); /* NCCL in the child gets no profiler from us */
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

/* CUPTI serves one subscriber. If Nsight, torch.profiler (Kineto) or compute-sanitizer already
 * holds it, they win and we stay out of the way. We do not keep the subscription ourselves, so a
 * profiler started later can still take it. */
static bool
cupti_free(char *why, size_t len)
{
    char holder[128];

    if (!rs_attach_taken(holder, sizeof holder))
        return true;
    snprintf(why, len, "CUPTI is in use by %s; rankscope steps aside in this process",
             holder[0] ? holder : "another tool");
    return false;
}

static uint64_t
launch_wait_lag_ns(unsigned flush_ms)
{
    uint64_t ms = (uint64_t)flush_ms * LAUNCH_WAIT_LAG_FLUSHES;
    return (ms > LAUNCH_WAIT_MIN_LAG_MS ? ms : LAUNCH_WAIT_MIN_LAG_MS) * 1000000u;
}

static void
report_setting(const char *line)
{
    rs_collector_log("%s", line);
}

/* The NCCL profiler plugin (plugin.h) takes communicators from now on. NCCL loads one profiler
 * plugin: when NCCL_PROFILER_PLUGIN names another (NCCL Inspector, say), ours is never loaded and
 * theirs keeps working; said once, so that nobody wonders where the exact sequences went. */
static void
nccl_plugin_start(const struct rs_collector_settings *s)
{
    Dl_info self;
    const char *named = getenv("NCCL_PROFILER_PLUGIN");
    struct rs_plugin_options po = {(uint64_t)s->hang_ms * 1000000u, (unsigned)s->hang_factor};

    if (!dladdr((void *)InitializeInjection, &self))
        self.dli_fname = NULL;
    if (rs_plugin_other_named(named, self.dli_fname))
        rs_collector_log("NCCL_PROFILER_PLUGIN=%.200s is another NCCL profiler plugin; rankscope's "
                         "steps aside (collectives are matched from CUPTI's NCCL kernels)",
                         named);
    rs_plugin_arm(&po);
}

/* Kernels in windows unless PC sampling is on: CUPTI refuses CONCURRENT_KERNEL turned on once
 * PC sampling is enabled (NOT_COMPATIBLE, measured on H200 and H100; tests/gpu/pc_order.cu), so
 * a process that samples PCs traces kernels from the start, all the time. */
static bool
kernels_windowed(const struct rs_collector_settings *s)
{
    return s->kernels_in_windows && !s->pc_sampling;
}

/* Settles what kernel windows imply: no launch waits (activity.c says why: neither source of
 * queue times works in windows; said when RANKSCOPE_LAUNCH_WAIT asked for them). Returns whether
 * CUPTI is detached between windows (attach.h): unless NVTX goes to CUPTI, whose markers need
 * CUPTI attached all the time. */
static bool
settle_windows(struct rs_collector_settings *s)
{
    const char *nvtx = getenv("NVTX_INJECTION64_PATH"), *lw = getenv("RANKSCOPE_LAUNCH_WAIT");

    if (!kernels_windowed(s))
        return false;
    if (lw && *lw && strcmp(lw, "0") != 0)
        rs_collector_log("RANKSCOPE_LAUNCH_WAIT=%.32s: launch waits need RANKSCOPE_KERNELS=always; "
                         "kernels are traced in windows here, without them",
                         lw);
    s->launch_wait = RS_ACTIVITY_LAUNCH_WAIT_OFF;
    if (!s->detach)
        return false;
    if (nvtx && *nvtx) {
        rs_collector_log("NVTX_INJECTION64_PATH is set: CUPTI stays attached between kernel "
                         "windows for NVTX markers (RANKSCOPE_DETACH has no effect)");
        return false;
    }
    return true;
}

static void
initialize(void)
{
    struct rs_collector_settings *s = &state.settings;
    struct rs_env_identity id;
    char host[256] = "";
    char why[256] = "";
    uint32_t refusal = 0;

    rs_collector_settings_read(env, NULL, s);
    if (s->disable)
        return; /* the kill switch: not even a log line */
    rs_collector_settings_read(env, report_setting, s); /* again, saying what was not used */
    if (s->kernels_in_windows && s->pc_sampling)
        rs_collector_log("PC sampling is on: kernels are traced all the time, not in windows "
                         "(CUPTI refuses kernel activity turned on after PC sampling)");
    bool detach = settle_windows(s);
    struct rs_activity_options opts = {(unsigned)s->flush_ms,
                                       (size_t)s->buffer_kb << 10,
                                       s->pc_sampling ? &s->pc : NULL,
                                       s->sync,
                                       s->launch_wait,
                                       s->hook_debug,
                                       kernels_windowed(s) ? (uint64_t)s->window_ms * 1000000u
                                                           : 0,
                                       (uint64_t)s->window_period_ms * 1000000u,
                                       detach};
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
        s->agent_socket, demangle, s->step_range,
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
    if (opts.window_ns) {
        char text[160];
        snprintf(text, sizeof text,
                 "kernels traced in windows of %ld ms every %ld ms (RANKSCOPE_KERNELS=window)",
                 s->window_ms, s->window_period_ms);
        rs_convert_note(state.conv, RS_COLLECTOR_KERNELS_SAMPLED, text);
    }
    state.pid = getpid();
    pthread_atfork(NULL, NULL, in_forked_child);
    atexit(at_exit);
    nccl_plugin_start(s);
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
