/* PC sampling: enabled at context creation, windows opened and closed at kernel launches, drains
 * on the flush thread (see pcsampling.h). */
#include "node-agent/collector/pcsampling.h"

#include "common/clock.h"
#include "node-agent/collector/cuda_driver.h"
#include "node-agent/collector/log.h"

#include <cuda.h>
#include <cupti.h>
#include <cupti_pcsampling.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCS_PER_BUFFER 4096 /* PCs per GetData call; more are fetched in further calls */
#define MAX_DRAIN_CALLS 256 /* per window: CUPTI's backlog is bounded, a loop must be too */

/* The driver entry points we need, found in the process (libcuda is loaded: we run from cuInit). */
typedef CUresult (*ctx_push_fn)(CUcontext);
typedef CUresult (*ctx_pop_fn)(CUcontext *);
typedef CUresult (*ctx_sync_fn)(void);

static struct {
    rs_convert *conv;
    pthread_mutex_t *lock;
    struct rs_pcsampling_options o;
    bool open;
    _Atomic bool failed; /* read without the lock by captures (rs_pcsampling_capture) */
    uint64_t next_ns;
    /* windows (o.window_ms > 0): whether one is open, when it closes, when the next opens, and
     * the earliest time a launch has something to do (read without the lock) */
    bool in_window;
    uint64_t window_end_ns, next_window_ns;
    uint64_t capture_ms; /* the next window is a capture's, this long (0: o.window_ms) */
    /* A capture's request, from the flush thread without the lock (it holds the collector's
     * lock, which a drain on a launching thread takes under ours: rs_pcsampling_capture), applied
     * at the next launch; and whether the open or next window is a capture's, until it closed and
     * was drained (rs_pcsampling_capture_pending). */
    _Atomic uint64_t capture_request_ms;
    _Atomic bool capture_window;
    _Atomic uint64_t due_ns;
    CUcontext ctx; /* the rank's context, from its creation; NULL before */
    ctx_push_fn push;
    ctx_pop_fn pop;
    ctx_sync_fn sync;
    size_t n_reasons;
    uint32_t *reason_index;
    char **reason_names;
    CUpti_PCSamplingData config_buf, get_buf; /* CUPTI requires two distinct buffers */
    char **functions; /* set (open addressing) of the function names CUPTI handed us: ours to
                         free, once, at the end */
    size_t n_functions, functions_cap;
    CUpti_SubscriberHandle sub;
    pthread_mutex_t state; /* everything above: the callbacks vs. the flush thread */
} p = {.state = PTHREAD_MUTEX_INITIALIZER};

/* RANKSCOPE_PC_DEBUG=1: one stderr line per step of a drain, to see where sampling stands. */
#define DEBUG(...)                                                                                 \
    do {                                                                                           \
        if (p.o.debug)                                                                             \
            rs_collector_log(__VA_ARGS__);                                                         \
    } while (0)

/* Turns PC sampling off for the rest of the process, saying why once. With p.state held once
 * other threads may look (after start). */
static void
give_up(const char *what, CUptiResult rc)
{
    const char *text = NULL;

    if (rc != CUPTI_SUCCESS)
        cuptiGetResultString(rc, &text);
    rs_collector_log("PC sampling is off in this process: %s%s%s", what, text ? ": " : "",
                     text ? text : "");
    pthread_mutex_lock(p.lock);
    rs_convert_report(p.conv, 0, "PC sampling unavailable (see the training process's stderr)");
    pthread_mutex_unlock(p.lock);
    p.failed = true;
    atomic_store_explicit(&p.due_ns, UINT64_MAX,
                          memory_order_relaxed); /* launches: nothing to do */
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data);

int
rs_pcsampling_start(rs_convert *conv, pthread_mutex_t *lock, const struct rs_pcsampling_options *o)
{
    p.conv = conv;
    p.lock = lock;
    p.o = *o;
    p.push = (ctx_push_fn)rs_cuda_driver_symbol("cuCtxPushCurrent_v2");
    p.pop = (ctx_pop_fn)rs_cuda_driver_symbol("cuCtxPopCurrent_v2");
    p.sync = (ctx_sync_fn)rs_cuda_driver_symbol("cuCtxSynchronize");
    if (!p.push || !p.pop || !p.sync) {
        rs_collector_log("PC sampling is off: the CUDA driver's entry points are not there");
        return -1;
    }
    CUptiResult rc = cuptiSubscribe(&p.sub, on_callback, NULL);
    if (rc == CUPTI_SUCCESS)
        rc = cuptiEnableCallback(1, p.sub, CUPTI_CB_DOMAIN_RESOURCE,
                                 CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
    /* the launches windows open and close at */
    CUpti_CallbackId cbid;
    for (size_t i = 0; rc == CUPTI_SUCCESS && p.o.window_ms && rs_convert_launch_call(i, &cbid);
         i++)
        rc = cuptiEnableCallback(1, p.sub, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
    if (rc != CUPTI_SUCCESS) {
        if (p.sub)
            cuptiUnsubscribe(p.sub);
        p.sub = NULL;
        give_up("subscribing to context creation and kernel launches", rc);
        return -1;
    }
    return 0;
}

static int
alloc_buffer(CUpti_PCSamplingData *d)
{
    memset(d, 0, sizeof *d);
    d->size = sizeof *d;
    d->collectNumPcs = PCS_PER_BUFFER;
    if (!(d->pPcData = calloc(PCS_PER_BUFFER, sizeof *d->pPcData)))
        return -1;
    for (size_t i = 0; i < PCS_PER_BUFFER; i++) {
        d->pPcData[i].size = sizeof d->pPcData[i];
        if (!(d->pPcData[i].stallReason = calloc(p.n_reasons, sizeof *d->pPcData[i].stallReason)))
            return -1;
    }
    return 0;
}

/* Stall-reason names and the two data buffers, once (the first window). */
static CUptiResult
prepare(void)
{
    CUpti_PCSamplingGetNumStallReasonsParams np = {CUpti_PCSamplingGetNumStallReasonsParamsSize,
                                                   NULL, p.ctx, &p.n_reasons};
    CUptiResult rc;

    if (p.reason_names)
        return CUPTI_SUCCESS;
    if ((rc = cuptiPCSamplingGetNumStallReasons(&np)) != CUPTI_SUCCESS)
        return rc;
    p.reason_index = calloc(p.n_reasons + 1, sizeof *p.reason_index);
    p.reason_names = calloc(p.n_reasons + 1, sizeof *p.reason_names);
    for (size_t i = 0; p.reason_names && i < p.n_reasons; i++)
        if (!(p.reason_names[i] = calloc(1, CUPTI_STALL_REASON_STRING_SIZE)))
            return CUPTI_ERROR_OUT_OF_MEMORY;
    if (!p.reason_index || !p.reason_names)
        return CUPTI_ERROR_OUT_OF_MEMORY;
    CUpti_PCSamplingGetStallReasonsParams rp = {CUpti_PCSamplingGetStallReasonsParamsSize,
                                                NULL,
                                                p.ctx,
                                                p.n_reasons,
                                                p.reason_index,
                                                p.reason_names};
    if ((rc = cuptiPCSamplingGetStallReasons(&rp)) != CUPTI_SUCCESS)
        return rc;
    if (alloc_buffer(&p.config_buf) != 0 || alloc_buffer(&p.get_buf) != 0)
        return CUPTI_ERROR_OUT_OF_MEMORY;
    return CUPTI_SUCCESS;
}

static CUptiResult
configure(void)
{
    CUpti_PCSamplingConfigurationInfo info[6];
    size_t n = 0;

    memset(info, 0, sizeof info);
    info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
    info[n++].attributeData.samplingDataBufferData.samplingDataBuffer = &p.config_buf;
    info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
    info[n++].attributeData.collectionModeData.collectionMode =
        p.o.window_ms ? CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED
                      : CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
    info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE;
    info[n++].attributeData.hardwareBufferSizeData.hardwareBufferSize = (size_t)p.o.hw_buffer_mb
                                                                        << 20;
    info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
    info[n].attributeData.stallReasonData.stallReasonCount = p.n_reasons;
    info[n++].attributeData.stallReasonData.pStallReasonIndex = p.reason_index;
    if (p.o.window_ms) {
        info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
        info[n++].attributeData.enableStartStopControlData.enableStartStopControl = 1;
    }
    if (p.o.sampling_period) {
        info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
        info[n++].attributeData.samplingPeriodData.samplingPeriod = (uint32_t)p.o.sampling_period;
    }
    CUpti_PCSamplingConfigurationInfoParams cp = {CUpti_PCSamplingConfigurationInfoParamsSize, NULL,
                                                  p.ctx, n, info};
    return cuptiPCSamplingSetConfigurationAttribute(&cp);
}

static const char *
reason_name(uint32_t index)
{
    for (size_t i = 0; i < p.n_reasons; i++)
        if (p.reason_index[i] == index)
            return p.reason_names[i];
    return "unknown";
}

static size_t
pointer_slot(const void *ptr, size_t cap)
{
    return (size_t)(((uintptr_t)ptr >> 4) * 0x9e3779b97f4a7c15ull) & (cap - 1);
}

/* Adds name to the set (cap a power of two, half full at most). */
static void
put_function(char **set, size_t cap, char *name)
{
    size_t i = pointer_slot(name, cap);
    while (set[i] && set[i] != name)
        i = (i + 1) & (cap - 1);
    set[i] = name;
}

/* Keeps a CUPTI-allocated function name to free at the end (names are shared between records, so
 * each pointer once: a set, since every drained PC asks). */
static void
remember_function(char *name)
{
    if (!name)
        return;
    if (p.functions_cap) {
        size_t i = pointer_slot(name, p.functions_cap);
        for (; p.functions[i]; i = (i + 1) & (p.functions_cap - 1))
            if (p.functions[i] == name)
                return;
    }
    if (2 * (p.n_functions + 1) > p.functions_cap) {
        size_t cap = p.functions_cap ? 2 * p.functions_cap : 256;
        char **v = calloc(cap, sizeof *v);
        if (!v)
            return; /* leaks one name rather than risk a double free */
        for (size_t i = 0; i < p.functions_cap; i++)
            if (p.functions[i])
                put_function(v, cap, p.functions[i]);
        free(p.functions);
        p.functions = v;
        p.functions_cap = cap;
    }
    put_function(p.functions, p.functions_cap, name);
    p.n_functions++;
}

/* Hands the counts of a filled buffer to the converter. */
static void
consume(CUpti_PCSamplingData *d)
{
    size_t n = d->totalNumPcs < d->collectNumPcs ? d->totalNumPcs : d->collectNumPcs;

    pthread_mutex_lock(p.lock);
    for (size_t i = 0; i < n; i++) {
        const CUpti_PCSamplingPCData *pc = &d->pPcData[i];
        for (size_t r = 0; r < pc->stallReasonCount && r < p.n_reasons; r++)
            if (pc->stallReason[r].samples)
                rs_convert_stall(p.conv, pc->functionName,
                                 reason_name(pc->stallReason[r].pcSamplingStallReasonIndex),
                                 pc->pcOffset, pc->stallReason[r].samples, pc->cubinCrc);
    }
    if (d->hardwareBufferFull)
        rs_convert_count_dropped(p.conv, 1);
    pthread_mutex_unlock(p.lock);
    for (size_t i = 0; i < n; i++)
        remember_function(d->pPcData[i].functionName);
    d->totalNumPcs = 0;
}

/* A new context, on the application thread that created it (current): PC sampling must be on
 * before the context loads its modules — enabled later, it samples nothing (seen in bring-up runs
 * on H200). The first context is the rank's; later ones are left alone. */
static void
on_context_created(CUcontext ctx)
{
    const char *what = NULL;
    CUptiResult rc;

    pthread_mutex_lock(&p.state);
    if (!p.ctx && !p.failed) {
        p.ctx = ctx;
        CUpti_PCSamplingEnableParams ep = {CUpti_PCSamplingEnableParamsSize, NULL, p.ctx};
        DEBUG("pc sampling: enable on a new context");
        if ((rc = cuptiPCSamplingEnable(&ep)) != CUPTI_SUCCESS) {
            what = "cuptiPCSamplingEnable";
        } else if ((rc = prepare()) != CUPTI_SUCCESS || (rc = configure()) != CUPTI_SUCCESS) {
            CUpti_PCSamplingDisableParams dp = {CUpti_PCSamplingDisableParamsSize, NULL, p.ctx};
            cuptiPCSamplingDisable(&dp);
            what = "configuring PC sampling";
        }
        if (what)
            give_up(what, rc);
        else
            DEBUG("pc sampling: on (%zu stall reasons)", p.n_reasons);
        p.open = !what;
    }
    pthread_mutex_unlock(&p.state);
}

/* Opens a window (the context current, the GPU idle; p.state held): CUPTI samples from here. */
static CUptiResult
window_start(uint64_t now_ns)
{
    CUpti_PCSamplingStartParams sp = {CUpti_PCSamplingStartParamsSize, NULL, p.ctx};
    CUptiResult rc = cuptiPCSamplingStart(&sp);

    DEBUG("pc sampling: window opened (synchronize and cuptiPCSamplingStart took %.3f ms)",
          (double)(rs_clock_mono_ns() - now_ns) / 1e6);
    if (rc == CUPTI_SUCCESS) {
        p.in_window = true;
        p.window_end_ns = now_ns + (p.capture_ms ? p.capture_ms : p.o.window_ms) * 1000000ull;
        p.capture_ms = 0;
        p.next_window_ns = now_ns + (uint64_t)p.o.period_ms * 1000000ull;
        atomic_store_explicit(&p.due_ns, p.window_end_ns, memory_order_relaxed);
    }
    return rc;
}

/* Closes the window (the context current; p.state held): CUPTI stops sampling and flushes what
 * the GPU sampled, for GetData. */
static CUptiResult
window_stop(void)
{
    CUpti_PCSamplingStopParams sp = {CUpti_PCSamplingStopParamsSize, NULL, p.ctx};
    uint64_t t0 = rs_clock_mono_ns();
    CUptiResult rc = cuptiPCSamplingStop(&sp);

    DEBUG("pc sampling: window closed (cuptiPCSamplingStop took %.3f ms)",
          (double)(rs_clock_mono_ns() - t0) / 1e6);
    p.in_window = false;
    atomic_store_explicit(&p.due_ns, p.next_window_ns, memory_order_relaxed);
    return rc;
}

/* Fetches what CUPTI has decoded so far (the context current; p.state held); CUPTI_SUCCESS, or
 * the error that ended it. */
static CUptiResult
get_data(void)
{
    CUptiResult rc = CUPTI_SUCCESS;

    for (int i = 0; i < MAX_DRAIN_CALLS; i++) {
        CUpti_PCSamplingGetDataParams gp = {CUpti_PCSamplingGetDataParamsSize, NULL, p.ctx,
                                            &p.get_buf};
        if ((rc = cuptiPCSamplingGetData(&gp)) != CUPTI_SUCCESS &&
            rc != CUPTI_ERROR_OUT_OF_MEMORY) /* OUT_OF_MEMORY: hardware buffer was full */
            return rc;
        DEBUG("pc sampling: %zu PCs, %zu remaining", p.get_buf.totalNumPcs,
              p.get_buf.remainingNumPcs);
        size_t remaining = p.get_buf.remainingNumPcs;
        consume(&p.get_buf);
        if (remaining == 0)
            break;
    }
    return CUPTI_SUCCESS;
}

/* Applies a capture's request (rs_pcsampling_capture; p.state held): an open window is extended
 * to the capture's end, else the capture's window opens at this or the next launch's entry. */
static void
take_capture_request(uint64_t now_ns)
{
    uint64_t ms = atomic_exchange(&p.capture_request_ms, 0);

    if (!ms)
        return;
    if (p.in_window) {
        uint64_t end = now_ns + ms * 1000000ull;
        if (end > p.window_end_ns)
            p.window_end_ns = end;
        atomic_store_explicit(&p.due_ns, p.window_end_ns, memory_order_relaxed);
    } else {
        p.capture_ms = ms;
        p.next_window_ns = now_ns;
        atomic_store_explicit(&p.due_ns, now_ns, memory_order_relaxed);
    }
}

/* A kernel launch of the rank's context, on the launching thread (the context current): a window
 * opens as a launch begins — after the GPU has drained, as CUPTI's start requires — and closes as
 * the first launch after its end returns, and what it sampled is drained there. Launches in
 * between cost a clock read. Busy state (the flush thread draining): the next launch tries. */
static void
on_launch(const CUpti_CallbackData *cb)
{
    uint64_t now_ns = rs_clock_mono_ns();
    const char *what = NULL;
    CUptiResult rc = CUPTI_SUCCESS;

    if (now_ns < atomic_load_explicit(&p.due_ns, memory_order_relaxed) ||
        pthread_mutex_trylock(&p.state) != 0)
        return;
    take_capture_request(now_ns);
    if (p.open && !p.failed && cb->context == p.ctx) {
        if (!p.in_window && cb->callbackSite == CUPTI_API_ENTER && now_ns >= p.next_window_ns) {
            if (p.sync() != CUDA_SUCCESS)
                what = "cuCtxSynchronize before a window";
            else if ((rc = window_start(now_ns)) != CUPTI_SUCCESS)
                what = "cuptiPCSamplingStart";
        } else if (p.in_window && cb->callbackSite == CUPTI_API_EXIT && now_ns >= p.window_end_ns) {
            if ((rc = window_stop()) != CUPTI_SUCCESS)
                what = "cuptiPCSamplingStop";
            else if ((rc = get_data()) != CUPTI_SUCCESS)
                what = "cuptiPCSamplingGetData";
            atomic_store(&p.capture_window, false); /* drained: with the collector's records */
        }
    }
    /* A capture's request that came while this launch held the lock (after take_capture_request)
     * must not be lost to the stores above: the request is stored before its flags
     * (rs_pcsampling_capture), so seeing none here means those flags land after ours. */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load(&p.capture_request_ms) && !p.failed) {
        atomic_store(&p.capture_window, true);
        atomic_store(&p.due_ns, 0);
    }
    if (what)
        give_up(what, rc);
    pthread_mutex_unlock(&p.state);
}

int
rs_pcsampling_capture(unsigned seconds, char *why, size_t len)
{
    if (!p.lock || p.failed) {
        snprintf(why, len,
                 p.failed ? "PC sampling failed earlier in this process"
                          : "PC sampling is not on in this process (RANKSCOPE_PC_SAMPLING=1 at "
                            "its start: CUPTI turns it on when the context is created)");
        return -1;
    }
    if (p.o.window_ms) { /* the request first: on_launch's check relies on the order */
        atomic_store(&p.capture_request_ms, (uint64_t)seconds * 1000u);
        atomic_store(&p.capture_window, true);
        atomic_store(&p.due_ns, 0); /* the next launch takes it */
    }
    return 0;
}

bool
rs_pcsampling_capture_pending(void)
{
    return !p.failed && atomic_load(&p.capture_window);
}

/* CUPTI's callbacks: context creation, and the kernel launches when windows are asked for. */
static void CUPTIAPI
on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    (void)userdata;
    if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED)
        on_context_created(((const CUpti_ResourceData *)data)->context);
    else if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
        on_launch(data);
}

/* Drains what was sampled when it is due (or everything, and turns sampling off, the last time:
 * a window still open is closed first). Flush thread or exit; p.state held. */
static void
step(uint64_t now_ns, bool last)
{
    CUcontext popped;
    CUptiResult rc = CUPTI_SUCCESS;
    const char *what = NULL;

    if (!last && now_ns < p.next_ns)
        return;
    p.next_ns = now_ns + (uint64_t)p.o.drain_ms * 1000000ull;
    if (p.push(p.ctx) != CUDA_SUCCESS) {
        give_up("cannot make the GPU's context current", CUPTI_SUCCESS);
        return;
    }
    if (last && p.in_window && (rc = window_stop()) != CUPTI_SUCCESS)
        what = "cuptiPCSamplingStop";
    if (!what && (rc = get_data()) != CUPTI_SUCCESS)
        what = "cuptiPCSamplingGetData";
    if (last) {
        CUpti_PCSamplingDisableParams dp = {CUpti_PCSamplingDisableParamsSize, NULL, p.ctx};
        CUptiResult drc = cuptiPCSamplingDisable(&dp);
        consume(&p.config_buf); /* what Disable left in the configured buffer */
        p.open = false;
        if (!what && drc != CUPTI_SUCCESS) {
            rc = drc;
            what = "cuptiPCSamplingDisable";
        }
    }
    p.pop(&popped);
    if (what)
        give_up(what, rc);
}

void
rs_pcsampling_tick(uint64_t now_ns)
{
    pthread_mutex_lock(&p.state);
    if (p.open && !p.failed)
        step(now_ns, false);
    pthread_mutex_unlock(&p.state);
}

void
rs_pcsampling_finish(void)
{
    pthread_mutex_lock(&p.state);
    if (p.open && !p.failed)
        step(rs_clock_mono_ns(), true);
    pthread_mutex_unlock(&p.state);
    if (p.sub)
        cuptiUnsubscribe(p.sub);
    p.sub = NULL;
    for (size_t i = 0; i < p.functions_cap; i++)
        free(p.functions[i]);
    free(p.functions);
    p.functions = NULL;
    p.n_functions = p.functions_cap = 0;
}
