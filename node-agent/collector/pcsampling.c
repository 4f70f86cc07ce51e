/* PC-sampling windows on the flush thread (see pcsampling.h). */
#include "node-agent/collector/pcsampling.h"

#include "node-agent/collector/log.h"

#include <cuda.h>
#include <cupti.h>
#include <cupti_pcsampling.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define PCS_PER_BUFFER 4096 /* PCs per GetData call; more are fetched in further calls */
#define MAX_DRAIN_CALLS 256 /* per window: CUPTI's backlog is bounded, a loop must be too */

/* The driver entry points we need, found in the process (libcuda is loaded: we run from cuInit). */
typedef CUresult (*device_get_fn)(CUdevice *, int);
typedef CUresult (*primary_retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*ctx_push_fn)(CUcontext);
typedef CUresult (*ctx_pop_fn)(CUcontext *);

static struct {
    rs_convert *conv;
    pthread_mutex_t *lock;
    struct rs_pcsampling_options o;
    bool armed, open, failed;
    uint64_t next_ns, window_end_ns;
    CUdevice device;
    CUcontext ctx; /* the primary context we retained; NULL before */
    device_get_fn device_get;
    primary_retain_fn primary_retain;
    ctx_push_fn push;
    ctx_pop_fn pop;
    size_t n_reasons;
    uint32_t *reason_index;
    char **reason_names;
    CUpti_PCSamplingData config_buf, get_buf; /* CUPTI requires two distinct buffers */
    char **functions; /* function names CUPTI handed us: ours to free, once, at the end */
    size_t n_functions, functions_cap;
} p;

static long
env_long(const char *(*env)(const char *), const char *name, long lo, long hi, long fallback)
{
    const char *v = env(name);
    char *end;
    long n = v ? strtol(v, &end, 10) : 0;

    return v && *v && *end == '\0' && n >= lo && n <= hi ? n : fallback;
}

int
rs_pcsampling_options_from_env(const char *(*env)(const char *), struct rs_pcsampling_options *o)
{
    const char *on = env("RANKSCOPE_PC_SAMPLING");

    o->window_ms = (unsigned)env_long(env, "RANKSCOPE_PC_WINDOW_MS", 50, 600000, 1000);
    o->period_s = (unsigned)env_long(env, "RANKSCOPE_PC_PERIOD_S", 1, 86400, 60);
    o->sampling_period = (int)env_long(env, "RANKSCOPE_PC_SAMPLING_PERIOD", 5, 31, 0);
    o->hw_buffer_mb = (unsigned)env_long(env, "RANKSCOPE_PC_HW_BUFFER_MB", 16, 4096, 64);
    if (o->period_s * 1000u < o->window_ms)
        o->period_s = (o->window_ms + 999) / 1000; /* a window per period at most: always on */
    return on && *on && strcmp(on, "0") != 0;
}

/* Turns PC sampling off for the rest of the process, saying why once. */
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
}

int
rs_pcsampling_start(rs_convert *conv, pthread_mutex_t *lock, const struct rs_pcsampling_options *o)
{
    p.conv = conv;
    p.lock = lock;
    p.o = *o;
    p.device_get = (device_get_fn)dlsym(RTLD_DEFAULT, "cuDeviceGet");
    p.primary_retain = (primary_retain_fn)dlsym(RTLD_DEFAULT, "cuDevicePrimaryCtxRetain");
    p.push = (ctx_push_fn)dlsym(RTLD_DEFAULT, "cuCtxPushCurrent_v2");
    p.pop = (ctx_pop_fn)dlsym(RTLD_DEFAULT, "cuCtxPopCurrent_v2");
    if (!p.device_get || !p.primary_retain || !p.push || !p.pop) {
        rs_collector_log("PC sampling is off: the CUDA driver's entry points are not there");
        return -1;
    }
    p.armed = true;
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
    CUpti_PCSamplingGetNumStallReasonsParams np = {
        CUpti_PCSamplingGetNumStallReasonsParamsSize, NULL, p.ctx, &p.n_reasons};
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
    CUpti_PCSamplingConfigurationInfo info[5];
    size_t n = 0;

    memset(info, 0, sizeof info);
    info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
    info[n++].attributeData.samplingDataBufferData.samplingDataBuffer = &p.config_buf;
    info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
    info[n++].attributeData.collectionModeData.collectionMode =
        CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
    info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE;
    info[n++].attributeData.hardwareBufferSizeData.hardwareBufferSize =
        (size_t)p.o.hw_buffer_mb << 20;
    info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
    info[n].attributeData.stallReasonData.stallReasonCount = p.n_reasons;
    info[n++].attributeData.stallReasonData.pStallReasonIndex = p.reason_index;
    if (p.o.sampling_period) {
        info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
        info[n++].attributeData.samplingPeriodData.samplingPeriod = (uint32_t)p.o.sampling_period;
    }
    CUpti_PCSamplingConfigurationInfoParams cp = {CUpti_PCSamplingConfigurationInfoParamsSize,
                                                  NULL, p.ctx, n, info};
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

/* Keeps a CUPTI-allocated function name to free at the end (names are shared between records). */
static void
remember_function(char *name)
{
    if (!name)
        return;
    for (size_t i = p.n_functions; i-- > 0;)
        if (p.functions[i] == name)
            return;
    if (p.n_functions == p.functions_cap) {
        size_t cap = p.functions_cap ? 2 * p.functions_cap : 256;
        char **v = realloc(p.functions, cap * sizeof *v);
        if (!v)
            return; /* leaks one name rather than risk a double free */
        p.functions = v;
        p.functions_cap = cap;
    }
    p.functions[p.n_functions++] = name;
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

static void
open_window(int device, uint64_t now_ns)
{
    CUcontext popped;
    CUptiResult rc;

    if (!p.ctx && (p.device_get(&p.device, device) != CUDA_SUCCESS ||
                   p.primary_retain(&p.ctx, p.device) != CUDA_SUCCESS)) {
        p.ctx = NULL;
        give_up("cannot get the GPU's primary context", CUPTI_SUCCESS);
        return;
    }
    if (p.push(p.ctx) != CUDA_SUCCESS) {
        give_up("cannot make the GPU's context current", CUPTI_SUCCESS);
        return;
    }
    CUpti_PCSamplingEnableParams ep = {CUpti_PCSamplingEnableParamsSize, NULL, p.ctx};
    if ((rc = cuptiPCSamplingEnable(&ep)) != CUPTI_SUCCESS)
        give_up("cuptiPCSamplingEnable", rc);
    else if ((rc = prepare()) != CUPTI_SUCCESS || (rc = configure()) != CUPTI_SUCCESS) {
        CUpti_PCSamplingDisableParams dp = {CUpti_PCSamplingDisableParamsSize, NULL, p.ctx};
        cuptiPCSamplingDisable(&dp);
        give_up("configuring PC sampling", rc);
    } else {
        p.open = true;
        p.window_end_ns = now_ns + (uint64_t)p.o.window_ms * 1000000ull;
    }
    p.pop(&popped);
}

static void
close_window(uint64_t now_ns)
{
    CUcontext popped;
    CUptiResult rc = CUPTI_SUCCESS;

    p.open = false;
    p.next_ns = now_ns + (uint64_t)p.o.period_s * 1000000000ull;
    if (p.push(p.ctx) != CUDA_SUCCESS) {
        give_up("cannot make the GPU's context current", CUPTI_SUCCESS);
        return;
    }
    for (int i = 0; i < MAX_DRAIN_CALLS; i++) {
        CUpti_PCSamplingGetDataParams gp = {CUpti_PCSamplingGetDataParamsSize, NULL, p.ctx,
                                            &p.get_buf};
        if ((rc = cuptiPCSamplingGetData(&gp)) != CUPTI_SUCCESS &&
            rc != CUPTI_ERROR_OUT_OF_MEMORY) /* OUT_OF_MEMORY: hardware buffer was full */
            break;
        consume(&p.get_buf);
        if (p.get_buf.remainingNumPcs == 0)
            break;
    }
    CUpti_PCSamplingDisableParams dp = {CUpti_PCSamplingDisableParamsSize, NULL, p.ctx};
    CUptiResult drc = cuptiPCSamplingDisable(&dp);
    consume(&p.config_buf); /* what Disable left in the configured buffer */
    p.pop(&popped);
    if (rc != CUPTI_SUCCESS && rc != CUPTI_ERROR_OUT_OF_MEMORY)
        give_up("cuptiPCSamplingGetData", rc);
    else if (drc != CUPTI_SUCCESS)
        give_up("cuptiPCSamplingDisable", drc);
}

void
rs_pcsampling_tick(uint64_t now_ns)
{
    if (!p.armed || p.failed)
        return;
    if (p.open) {
        if (now_ns >= p.window_end_ns)
            close_window(now_ns);
        return;
    }
    pthread_mutex_lock(p.lock);
    int device = rs_convert_device(p.conv);
    pthread_mutex_unlock(p.lock);
    if (device < 0)
        return;
    if (p.next_ns == 0) /* the first kernel ran: the first window one period later */
        p.next_ns = now_ns + (uint64_t)p.o.period_s * 1000000000ull;
    else if (now_ns >= p.next_ns)
        open_window(device, now_ns);
}

void
rs_pcsampling_finish(void)
{
    if (p.open && !p.failed)
        close_window(p.window_end_ns);
    p.armed = false;
    for (size_t i = 0; i < p.n_functions; i++)
        free(p.functions[i]);
    p.n_functions = 0;
    /* the primary context stays retained: the process is exiting, and releasing it here could
     * tear it down under the application's last CUDA calls */
}
