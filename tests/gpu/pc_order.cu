/* What CUPTI (CUDA 13) allows between kernel activity and PC sampling in one process (issue 25
 * item 4: a PC-sampling capture in a process that traces kernels in windows). One scenario per
 * run (argv[1]); each prints one JSON line with CUPTI's return codes, the kernel records that
 * arrived and the PCs / stall samples PC sampling returned:
 *   toggle   kernel activity on, context created, PC sampling enabled (kernel-serialized,
 *            start/stop control), kernel activity off, kernels, kernel activity on again (a
 *            window opening after PC sampling was enabled), a PC window (start, kernels, stop)
 *   pc_first PC sampling enabled on a new context, then kernel activity on (process-wide and
 *            per context)
 *   pc_late  kernel activity on, kernels (modules loaded), then PC sampling enabled and a window
 *            (enabling PC sampling only when a capture asks for it)
 * (kernel records counted before and after the re-enable: 20 kernels ran before, 40 after). Built
 * with nvcc: nvcc -O2 -o pc_order pc_order.cu -lcupti -lcuda */
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <cupti_pcsampling.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long n_kernels;

static void CUPTIAPI
requested(uint8_t **buf, size_t *size, size_t *max)
{
    *buf = (uint8_t *)aligned_alloc(8, 4 << 20);
    *size = 4 << 20;
    *max = 0;
}

static void CUPTIAPI
completed(CUcontext c, uint32_t s, uint8_t *buf, size_t size, size_t valid)
{
    CUpti_Activity *r = NULL;
    while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS)
        if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
            n_kernels++;
    free(buf);
}

__global__ void
spin(float *x, int iters)
{
    float v = x[threadIdx.x + blockIdx.x * blockDim.x];
    for (int i = 0; i < iters; i++)
        v = v * 1.0001f + 0.5f;
    x[threadIdx.x + blockIdx.x * blockDim.x] = v;
}

static float *dbuf;

static void
kernels(int n)
{
    for (int i = 0; i < n; i++)
        spin<<<264, 256>>>(dbuf, 20000);
    cudaDeviceSynchronize();
}

static CUcontext ctx;
static CUpti_PCSamplingData cfg, get;
static size_t n_reasons;
static uint32_t *reason_index;

static void
alloc_data(CUpti_PCSamplingData *d)
{
    memset(d, 0, sizeof *d);
    d->size = sizeof *d;
    d->collectNumPcs = 2048;
    d->pPcData = (CUpti_PCSamplingPCData *)calloc(2048, sizeof *d->pPcData);
    for (int i = 0; i < 2048; i++) {
        d->pPcData[i].size = sizeof d->pPcData[i];
        d->pPcData[i].stallReason =
            (CUpti_PCSamplingStallReason *)calloc(n_reasons, sizeof(CUpti_PCSamplingStallReason));
    }
}

/* Enables and configures PC sampling on ctx (kernel-serialized, start/stop control). */
static CUptiResult
pc_enable(void)
{
    CUpti_PCSamplingEnableParams ep = {CUpti_PCSamplingEnableParamsSize, NULL, ctx};
    CUptiResult rc = cuptiPCSamplingEnable(&ep);
    if (rc != CUPTI_SUCCESS)
        return rc;
    CUpti_PCSamplingGetNumStallReasonsParams np = {CUpti_PCSamplingGetNumStallReasonsParamsSize,
                                                   NULL, ctx, &n_reasons};
    if ((rc = cuptiPCSamplingGetNumStallReasons(&np)) != CUPTI_SUCCESS)
        return rc;
    reason_index = (uint32_t *)calloc(n_reasons, sizeof *reason_index);
    char **names = (char **)calloc(n_reasons, sizeof *names);
    for (size_t i = 0; i < n_reasons; i++)
        names[i] = (char *)calloc(1, CUPTI_STALL_REASON_STRING_SIZE);
    CUpti_PCSamplingGetStallReasonsParams rp = {
        CUpti_PCSamplingGetStallReasonsParamsSize, NULL, ctx, n_reasons, reason_index, names};
    if ((rc = cuptiPCSamplingGetStallReasons(&rp)) != CUPTI_SUCCESS)
        return rc;
    alloc_data(&cfg);
    alloc_data(&get);
    CUpti_PCSamplingConfigurationInfo info[4];
    memset(info, 0, sizeof info);
    info[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
    info[0].attributeData.samplingDataBufferData.samplingDataBuffer = &cfg;
    info[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
    info[1].attributeData.collectionModeData.collectionMode =
        CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED;
    info[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
    info[2].attributeData.enableStartStopControlData.enableStartStopControl = 1;
    info[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
    info[3].attributeData.stallReasonData.stallReasonCount = n_reasons;
    info[3].attributeData.stallReasonData.pStallReasonIndex = reason_index;
    CUpti_PCSamplingConfigurationInfoParams cp = {CUpti_PCSamplingConfigurationInfoParamsSize,
                                                  NULL, ctx, 4, info};
    return cuptiPCSamplingSetConfigurationAttribute(&cp);
}

/* A window around n kernels; PCs and samples drained after it. */
static CUptiResult
pc_window(int n, unsigned long *pcs, unsigned long *samples)
{
    CUpti_PCSamplingStartParams sp = {CUpti_PCSamplingStartParamsSize, NULL, ctx};
    CUpti_PCSamplingStopParams tp = {CUpti_PCSamplingStopParamsSize, NULL, ctx};
    CUptiResult rc;
    cudaDeviceSynchronize();
    if ((rc = cuptiPCSamplingStart(&sp)) != CUPTI_SUCCESS)
        return rc;
    kernels(n);
    if ((rc = cuptiPCSamplingStop(&tp)) != CUPTI_SUCCESS)
        return rc;
    for (int i = 0; i < 64; i++) {
        CUpti_PCSamplingGetDataParams gp = {CUpti_PCSamplingGetDataParamsSize, NULL, ctx, &get};
        rc = cuptiPCSamplingGetData(&gp);
        if (rc != CUPTI_SUCCESS && rc != CUPTI_ERROR_OUT_OF_MEMORY)
            return rc;
        size_t k = get.totalNumPcs < get.collectNumPcs ? get.totalNumPcs : get.collectNumPcs;
        *pcs += k;
        for (size_t j = 0; j < k; j++)
            for (size_t r = 0; r < get.pPcData[j].stallReasonCount; r++)
                *samples += get.pPcData[j].stallReason[r].samples;
        if (get.remainingNumPcs == 0)
            break;
    }
    return CUPTI_SUCCESS;
}

int
main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "toggle";
    int rc_ck_first = -1, rc_ck_off = -1, rc_ck_again = -1, rc_pc = -1, rc_ctx = -1, rc_win = -1;
    unsigned long pcs = 0, samples = 0, k_before = 0;

    cuptiActivityRegisterCallbacks(requested, completed);
    if (strcmp(how, "pc_first") != 0)
        rc_ck_first = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cudaFree(0);
    cuCtxGetCurrent(&ctx);
    cudaMalloc(&dbuf, 264 * 256 * sizeof(float));
    cudaMemset(dbuf, 0, 264 * 256 * sizeof(float));
    if (!strcmp(how, "pc_late"))
        kernels(20); /* the module loaded, kernels traced, before PC sampling exists */
    rc_pc = pc_enable();
    if (!strcmp(how, "toggle")) {
        rc_ck_off = cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        kernels(20);
        cuptiActivityFlushAll(1);
        k_before = n_kernels;
        rc_ck_again = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    } else if (!strcmp(how, "pc_first")) {
        rc_ck_again = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        rc_ctx = cuptiActivityEnableContext(ctx, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    } else {
        cuptiActivityFlushAll(1);
        k_before = n_kernels;
    }
    if (rc_pc == CUPTI_SUCCESS)
        rc_win = pc_window(20, &pcs, &samples);
    kernels(20);
    cuptiActivityFlushAll(1);
    printf("{\"scenario\":\"%s\",\"enable_kernels_first\":%d,\"pc_enable\":%d,"
           "\"disable_kernels\":%d,\"enable_kernels_after_pc\":%d,\"enable_kernels_context\":%d,"
           "\"pc_window\":%d,\"stall_reasons\":%zu,\"pcs\":%lu,\"stall_samples\":%lu,"
           "\"kernel_records_before\":%lu,\"kernel_records_after\":%lu}\n",
           how, rc_ck_first, rc_pc, rc_ck_off, rc_ck_again, rc_ctx, rc_win, n_reasons, pcs, samples,
           k_before, n_kernels - k_before);
    return 0;
}
