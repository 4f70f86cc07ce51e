/* The stand-in libcupti and driver of fake_cupti.h. Log tokens:
 *   s subscribe (cuptiSubscribe, _v2)   u unsubscribe
 *   R cuptiActivityRegisterCallbacks    K cuptiActivityEnable      X cuptiActivityDisable
 *   F cuptiActivityFlushAll, forced     f the same, not forced
 *   E PC sampling enable  D disable  S start  T stop  G get data  y cuCtxSynchronize
 *   L cuptiActivityEnableLatencyTimestamps(1)
 *   o cuptiEnableDomain(1, ...)         Z cuptiFinalize (CUPTI detached until its next call) */
#include "tests/unit/collector/fake_cupti.h"

#include <cuda.h>
#include <cupti_pcsampling.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_KINDS 128
#define MAX_CBIDS 2048
#define MAX_BUFFERS 16

static char log_text[512];
static size_t log_len;
static bool kind_on[MAX_KINDS], kind_ever[MAX_KINDS], api_on[MAX_CBIDS];
static bool api_ever; /* any driver-API records ever enabled */
static bool pc_enabled; /* cuptiPCSamplingEnable called, not disabled since */
static unsigned domains_on; /* bit per CUpti_CallbackDomain enabled (cuptiEnableDomain) */
static int attr_u8[16] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
static CUpti_BuffersCallbackRequestFunc requested;
static CUpti_BuffersCallbackCompleteFunc completed;
static struct {
    uint8_t *buffer;
    size_t size, valid;
} pending[MAX_BUFFERS];
static size_t n_pending, keep_next; /* buffers the next flush with any keeps */
static CUpti_CallbackFunc subscriber;
static int pcs_ready;
/* Guards the log and the pending buffers, which the collector's flush thread reaches through
 * cuptiActivityFlushAll while a test adds kernels (real CUPTI is thread-safe too). Never held
 * while the collector's callbacks run, which take locks of their own. */
static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;

CUptiResult fake_cupti_start_result = CUPTI_SUCCESS;
CUptiResult fake_cupti_subscribe_v2_result = CUPTI_SUCCESS;
const char *fake_cupti_holder = "";
uint32_t fake_cupti_version = CUPTI_API_VERSION;
int fake_cupti_pcs_after_stop = 2;
bool fake_cupti_serialized, fake_cupti_start_stop, fake_cupti_launches_subscribed;
bool fake_cupti_latency;
bool fake_cupti_detached;
unsigned fake_cupti_lazy_attaches, fake_cupti_finalizes;
CUptiResult fake_cupti_finalize_result = CUPTI_SUCCESS;

/* Real CUPTI attaches again at any call after cuptiFinalize (lazy initialisation): a collector
 * that means to attach subscribes (its probe for another client), registers its callbacks (R) or
 * sets an attribute; any other call while detached is counted as an attach nobody asked for. */
/* The collector's flush thread calls the stand-in while a test thread reads its state (and plays
 * an application thread's driver calls): plain flags and pointers go through these. */
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELEASE)

static void
lazy_attach(bool asked)
{
    if (__atomic_exchange_n(&fake_cupti_detached, false, __ATOMIC_ACQ_REL) && !asked)
        __atomic_fetch_add(&fake_cupti_lazy_attaches, 1, __ATOMIC_ACQ_REL);
}

static void
token(char c)
{
    lazy_attach(c == 'R' || c == 's');
    pthread_mutex_lock(&fake_lock);
    if (log_len + 1 < sizeof log_text)
        log_text[log_len++] = c;
    log_text[log_len] = '\0';
    pthread_mutex_unlock(&fake_lock);
}

const char *
fake_cupti_log(void)
{
    static char copy[sizeof log_text]; /* a snapshot: the flush thread may be adding tokens */

    pthread_mutex_lock(&fake_lock);
    memcpy(copy, log_text, sizeof copy);
    pthread_mutex_unlock(&fake_lock);
    return copy;
}

void
fake_cupti_reset(void)
{
    pthread_mutex_lock(&fake_lock);
    log_len = 0;
    log_text[0] = '\0';
    pthread_mutex_unlock(&fake_lock);
    pc_enabled = false;
}

bool
fake_cupti_kind_on(CUpti_ActivityKind kind)
{
    return (unsigned)kind < MAX_KINDS && LOAD(kind_on[kind]);
}

bool
fake_cupti_kind_ever(CUpti_ActivityKind kind)
{
    return (unsigned)kind < MAX_KINDS && LOAD(kind_ever[kind]);
}

bool
fake_cupti_driver_api_ever(void)
{
    return api_ever;
}

bool
fake_cupti_driver_api_on(CUpti_CallbackId cbid)
{
    return cbid < MAX_CBIDS && api_on[cbid];
}

int
fake_cupti_attribute_u8(CUpti_ActivityAttribute attr)
{
    return (unsigned)attr < 16 ? attr_u8[attr] : -1;
}

CUpti_CallbackFunc
fake_cupti_subscriber(void)
{
    return __atomic_load_n(&subscriber, __ATOMIC_ACQUIRE);
}

/* ---- activity API ------------------------------------------------------------------------- */
CUptiResult
cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t *size, void *value)
{
    lazy_attach(true); /* an attribute before the callbacks: as attaching does */
    if ((unsigned)attr < 16 && *size == 1)
        attr_u8[attr] = *(uint8_t *)value;
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                               CUpti_BuffersCallbackCompleteFunc comp)
{
    token('R');
    STORE(requested, req);
    STORE(completed, comp);
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiActivityEnable(CUpti_ActivityKind kind)
{
    token('K');
    /* CUPTI 13 on an H100: kernel activity turned on after PC sampling was enabled is refused,
     * also when it was on before and turned off (tests/gpu/pc_order.cu) */
    if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && pc_enabled)
        return CUPTI_ERROR_NOT_COMPATIBLE;
    if ((unsigned)kind < MAX_KINDS)
        STORE(kind_on[kind], true), STORE(kind_ever[kind], true);
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiActivityDisable(CUpti_ActivityKind kind)
{
    token('X');
    if ((unsigned)kind < MAX_KINDS)
        STORE(kind_on[kind], false);
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiActivityEnableAllSyncRecords(uint8_t enable)
{
    lazy_attach(false);
    (void)enable;
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiActivityEnableLatencyTimestamps(uint8_t enable)
{
    lazy_attach(false);
    if (enable)
        token('L');
    fake_cupti_latency = enable;
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
    lazy_attach(false);
    if (cbid < MAX_CBIDS)
        api_on[cbid] = enable;
    api_ever = api_ever || enable;
    return CUPTI_SUCCESS;
}

bool
fake_cupti_kernels(size_t n)
{
    uint8_t *buffer = NULL;
    size_t size = 0, max_records = 0, need = n * sizeof(CUpti_ActivityKernel10);
    bool room;

    pthread_mutex_lock(&fake_lock);
    room = n_pending < MAX_BUFFERS;
    pthread_mutex_unlock(&fake_lock);
    CUpti_BuffersCallbackRequestFunc req = LOAD(requested);
    if (!req || !room)
        return false;
    req(&buffer, &size, &max_records);
    if (!buffer || size < need)
        return false;
    for (size_t i = 0; i < size; i++) /* CUPTI was told the buffers come zeroed */
        if (buffer[i])
            return false;
    for (size_t i = 0; i < n; i++) {
        CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)(void *)buffer + i;
        k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k->name = "fake_kernel";
        k->start = 1000 + 10 * i;
        k->end = k->start + 5;
        k->streamId = 7;
        /* with latency timestamps, every other kernel queued 1 ns before it starts: late, after
         * the 5-ns gap behind its predecessor had begun */
        k->queued = fake_cupti_latency ? (i % 2 ? k->start - 1 : k->start - 20) : 0;
    }
    pthread_mutex_lock(&fake_lock);
    pending[n_pending].buffer = buffer;
    pending[n_pending].size = size;
    pending[n_pending++].valid = need;
    pthread_mutex_unlock(&fake_lock);
    return true;
}

void
fake_cupti_keep_buffers(size_t n)
{
    pthread_mutex_lock(&fake_lock);
    keep_next = n;
    pthread_mutex_unlock(&fake_lock);
}

CUptiResult
cuptiActivityFlushAll(uint32_t flag)
{
    __typeof__(pending) out;
    size_t back, n;

    token(flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED ? 'F' : 'f');
    pthread_mutex_lock(&fake_lock);
    n = back = n_pending;
    memcpy(out, pending, sizeof pending);
    n_pending = 0;
    if (n && keep_next) {
        back = n > keep_next ? n - keep_next : 0;
        keep_next = 0;
    }
    pthread_mutex_unlock(&fake_lock);
    for (size_t i = back; i < n; i++)
        free(out[i].buffer); /* gone to "another client" */
    for (size_t i = 0; i < back; i++)
        LOAD(completed)(NULL, 0, out[i].buffer, out[i].size, out[i].valid);
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
    CUpti_ActivityKernel10 *next = *record ? (CUpti_ActivityKernel10 *)(void *)*record + 1
                                           : (CUpti_ActivityKernel10 *)(void *)buffer;

    if ((uint8_t *)(next + 1) > buffer + valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = (CUpti_Activity *)next;
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *dropped)
{
    (void)ctx;
    (void)stream;
    *dropped = 0;
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiGetTimestamp(uint64_t *ns)
{
    lazy_attach(false);
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    *ns = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiGetResultString(CUptiResult r, const char **text)
{
    (void)r;
    *text = "stand-in error";
    return CUPTI_SUCCESS;
}

/* ---- callback API ------------------------------------------------------------------------- */
CUptiResult
cuptiSubscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc f, void *u)
{
    (void)u;
    token('s');
    *s = (CUpti_SubscriberHandle)&subscriber;
    __atomic_store_n(&subscriber, f, __ATOMIC_RELEASE); /* test threads call it (driver exits) */
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiSubscribe_v2(CUpti_SubscriberHandle *s, CUpti_CallbackFunc f, void *u,
                  CUpti_SubscriberParams *params)
{
    CUptiResult result = LOAD(fake_cupti_subscribe_v2_result); /* tests change it while running */
    if (result != CUPTI_SUCCESS) {
        if (params && params->oldSubscriberName && params->oldSubscriberSize)
            snprintf(params->oldSubscriberName, params->oldSubscriberSize, "%s", fake_cupti_holder);
        return result;
    }
    return cuptiSubscribe(s, f, u);
}

CUptiResult
cuptiGetVersion(uint32_t *version)
{
    *version = fake_cupti_version;
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiUnsubscribe(CUpti_SubscriberHandle s)
{
    (void)s;
    __atomic_store_n(&subscriber, NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&domains_on, 0, __ATOMIC_RELEASE);
    token('u');
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiEnableDomain(uint32_t on, CUpti_SubscriberHandle s, CUpti_CallbackDomain d)
{
    (void)s;
    if (on)
        token('o');
    if (on)
        __atomic_fetch_or(&domains_on, 1u << d, __ATOMIC_ACQ_REL);
    else
        __atomic_fetch_and(&domains_on, ~(1u << d), __ATOMIC_ACQ_REL);
    return CUPTI_SUCCESS;
}

/* Everything of CUPTI's goes: kinds, callbacks, the subscriber, buffers still held (freed) */
CUptiResult
cuptiFinalize(void)
{
    token('Z');
    if (fake_cupti_finalize_result != CUPTI_SUCCESS)
        return fake_cupti_finalize_result;
    pthread_mutex_lock(&fake_lock);
    for (size_t i = 0; i < n_pending; i++)
        free(pending[i].buffer);
    n_pending = 0;
    pthread_mutex_unlock(&fake_lock);
    for (size_t i = 0; i < MAX_KINDS; i++)
        STORE(kind_on[i], false);
    memset(api_on, 0, sizeof api_on);
    STORE(requested, NULL);
    STORE(completed, NULL);
    __atomic_store_n(&subscriber, NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&domains_on, 0, __ATOMIC_RELEASE);
    fake_cupti_latency = false;
    STORE(fake_cupti_detached, true);
    __atomic_fetch_add(&fake_cupti_finalizes, 1, __ATOMIC_ACQ_REL);
    return CUPTI_SUCCESS;
}

/* An application thread at `site` of a call of `domain`: the subscriber hears of it — a runtime
 * call only where that domain is enabled (CUPTI does not report the driver calls the runtime
 * makes for it), a driver call always. */
static void
api_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site)
{
    CUpti_CallbackData data = {0};
    CUpti_CallbackFunc f = fake_cupti_subscriber();
    bool heard = domain == CUPTI_CB_DOMAIN_DRIVER_API ||
                 (__atomic_load_n(&domains_on, __ATOMIC_ACQUIRE) & 1u << domain);

    data.callbackSite = site;
    if (f && heard)
        f(NULL, domain, cbid, &data);
}

void
fake_cupti_driver_call(CUpti_ApiCallbackSite site)
{
    api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, site);
}

void
fake_cupti_driver_call_exit(void)
{
    fake_cupti_driver_call(CUPTI_API_EXIT);
}

void
fake_cupti_runtime_call_exit(void)
{
    api_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
             CUPTI_API_EXIT);
}

CUptiResult
cuptiEnableCallback(uint32_t on, CUpti_SubscriberHandle s, CUpti_CallbackDomain d,
                    CUpti_CallbackId cbid)
{
    lazy_attach(false);
    (void)s;
    if (on && d == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel)
        fake_cupti_launches_subscribed = true;
    return CUPTI_SUCCESS;
}

/* ---- PC sampling -------------------------------------------------------------------------- */
CUptiResult
cuptiPCSamplingEnable(CUpti_PCSamplingEnableParams *p)
{
    (void)p;
    token('E');
    pc_enabled = true;
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiPCSamplingDisable(CUpti_PCSamplingDisableParams *p)
{
    (void)p;
    token('D');
    pc_enabled = false;
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiPCSamplingStart(CUpti_PCSamplingStartParams *p)
{
    (void)p;
    token('S');
    return fake_cupti_start_result;
}

CUptiResult
cuptiPCSamplingStop(CUpti_PCSamplingStopParams *p)
{
    (void)p;
    token('T');
    pcs_ready = fake_cupti_pcs_after_stop; /* the window's samples, flushed by the stop */
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiPCSamplingGetData(CUpti_PCSamplingGetDataParams *p)
{
    CUpti_PCSamplingData *d = p->pcSamplingData;

    token('G');
    d->totalNumPcs = (size_t)pcs_ready;
    d->remainingNumPcs = 0;
    for (int i = 0; i < pcs_ready; i++) {
        d->pPcData[i].functionName = strdup("gemm");
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
            fake_cupti_serialized = a->attributeData.collectionModeData.collectionMode ==
                                    CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED;
        if (a->attributeType == CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL)
            fake_cupti_start_stop =
                a->attributeData.enableStartStopControlData.enableStartStopControl;
    }
    return CUPTI_SUCCESS;
}

/* ---- the driver, found by pcsampling.c among the process's global symbols ------------------ */
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
    token('y');
    return CUDA_SUCCESS;
}
