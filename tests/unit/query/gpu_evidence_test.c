/* Hardware evidence (query/gpu_evidence.c) from readings built like NVML's: a GPU held by its
 * power cap runs at a lower clock with the SW power cap reason set and its power violation counter
 * growing with wall time; a faulty one adds uncorrected ECC errors, an XID and a link at x8. The
 * straggler's differences from its peers are items with their numbers; a healthy rank has none;
 * and a cap every GPU shares is no one rank's evidence. */
#include "query/gpu_evidence.h"
#include "query/gpu_busy.h"
#include "query/gpus.h"
#include "tests/store_fixture.h"

#include <stdio.h>
#include <string.h>

#define T0 1700000000000000000ull
#define S 1000000000ull

/* GPU `rank` of job `job`: 20 readings a second apart. capped: 1,410 MHz, reason bit, power
 * violation growing 0.78 s a second; faulty: 1 uncorrected ECC error a second, an XID at the 10th
 * reading, x8 link. */
static void
put_gpu(rs_store *st, const char *job, uint32_t rank, bool capped, bool faulty)
{
    static uint64_t seq = 100;
    char uuid[32];
    struct rs_gpu_sample g[20];

    snprintf(uuid, sizeof uuid, "GPU-%s-%u", job, rank);
    struct rs_rank_batch rb = {.identity = T_IDENTITY(job, rank, 4, uuid)};
    for (int i = 0; i < 20; i++)
        g[i] = (struct rs_gpu_sample){.uuid = uuid,
                                      .time_ns = T0 + (uint64_t)i * S,
                                      .present = RS_GPU_SM_CLOCK | RS_GPU_SM_CLOCK_MAX |
                                                 RS_GPU_CLOCK_REASONS | RS_GPU_VIOLATIONS |
                                                 RS_GPU_ECC | RS_GPU_XID | RS_GPU_PCIE_LINK,
                                      .sm_clock_mhz = capped ? 1410 : 1980,
                                      .sm_clock_max_mhz = 1980,
                                      .clock_reasons = capped ? RS_GPU_REASON_SW_POWER_CAP : 0,
                                      .power_violation_ns = capped ? (uint64_t)i * 780000000ull : 0,
                                      .ecc_uncorrected = faulty ? (uint64_t)i : 0,
                                      .xid_count = faulty && i == 10,
                                      .last_xid = faulty && i == 10 ? 79 : 0,
                                      .pcie_gen = 5,
                                      .pcie_gen_max = 5,
                                      .pcie_width = faulty ? 8 : 16,
                                      .pcie_width_max = 16};
    t_store_put_gpus(st, 7, ++seq, &rb, 1, g, 20);
}

static const struct rs_gpu_evidence_item *
item(const struct rs_gpu_evidence *e, const char *what)
{
    for (size_t i = 0; i < e->n; i++)
        if (strcmp(e->items[i].what, what) == 0)
            return &e->items[i];
    return NULL;
}

static void
evidence(void)
{
    char dir[] = "/tmp/rs-gpuev-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    rs_store_read *r;
    struct rs_gpu_evidence e[3];
    const struct rs_gpu_evidence_item *it;

    for (uint32_t k = 0; k < 4; k++) {
        put_gpu(st, "capped", k, k == 2, false);
        put_gpu(st, "faulty", k, false, k == 1);
        put_gpu(st, "allcapped", k, true, false);
    }
    T_EQ(rs_store_read_begin(st, &r), 0);
    uint32_t ranks[3] = {2, 0, 3};
    T_EQ(rs_gpu_evidence_for_ranks(r, "capped", ranks, 3, T0, T0 + 30 * S, e), 0);
    T_CHECK(e[0].telemetry);
    T_EQ(e[0].peers_with_telemetry, 3);
    T_CHECK((it = item(&e[0], "sm_mhz")) != NULL);
    if (it)
        T_CHECK(strcmp(it->text, "SM clock 1,410 MHz vs peers' 1,980") == 0);
    T_CHECK((it = item(&e[0], "power_cap")) != NULL);
    if (it) { /* the violation counter: 0.78 s a second */
        T_CHECK(it->value > 0.77 && it->value < 0.79);
        T_CHECK(strcmp(it->text, "power cap active 78% of the window (peers' 0%)") == 0);
    }
    T_EQ(e[0].n, 2);
    T_CHECK(strstr(e[0].recommendation, "power and cooling") != NULL);
    T_CHECK(e[1].telemetry);
    T_EQ(e[1].n, 0); /* healthy peers: nothing */
    T_CHECK(e[1].recommendation[0] == '\0');

    T_EQ(rs_gpu_evidence_for(r, "faulty", 1, T0, T0 + 30 * S, &e[0]), 0);
    T_CHECK((it = item(&e[0], "ecc_uncorrected")) != NULL && it && it->value == 19);
    T_CHECK((it = item(&e[0], "xids")) != NULL && it &&
            strcmp(it->text, "XID 79 (1 event in the window; peers' 0)") == 0);
    T_CHECK((it = item(&e[0], "pcie_width")) != NULL && it &&
            strcmp(it->text, "PCIe link x8 of x16 (peers' x16)") == 0);
    T_CHECK(item(&e[0], "sm_mhz") == NULL);
    T_CHECK(strstr(e[0].recommendation, "dcgmi diag") != NULL);

    /* every GPU capped alike: no one rank's evidence */
    T_EQ(rs_gpu_evidence_for(r, "allcapped", 2, T0, T0 + 30 * S, &e[0]), 0);
    T_CHECK(e[0].telemetry);
    T_EQ(e[0].n, 0);
    /* a window without readings, an unknown job: no telemetry, no items */
    T_EQ(rs_gpu_evidence_for(r, "capped", 2, T0 + 100 * S, T0 + 200 * S, &e[0]), 0);
    T_CHECK(!e[0].telemetry && e[0].n == 0);
    T_EQ(rs_gpu_evidence_for(r, "nojob", 2, T0, T0 + 30 * S, &e[0]), 0);
    T_CHECK(!e[0].telemetry);
    rs_store_read_end(r);
    t_store_remove(st, dir);
}

/* Kernel names of real libraries: tensor-core kernels and FMA-pipe ones told apart. */
static void
tensor_core_names(void)
{
    T_CHECK(rs_gpu_kernel_uses_tensor_cores("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x"
                                            "256x64_warpgroupsize2x1x1_execute_segment_k_off_"
                                            "kernel__5x_cublas"));
    T_CHECK(rs_gpu_kernel_uses_tensor_cores("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_nn"));
    T_CHECK(rs_gpu_kernel_uses_tensor_cores("volta_h884gemm_64x64_ldg8_nn"));
    T_CHECK(rs_gpu_kernel_uses_tensor_cores(
        "void "
        "cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_tn_align8>"));
    T_CHECK(
        !rs_gpu_kernel_uses_tensor_cores("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128"
                                         "x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute"));
    T_CHECK(!rs_gpu_kernel_uses_tensor_cores("void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_"
                                             "8x4_nt_align1>"));
    T_CHECK(!rs_gpu_kernel_uses_tensor_cores("ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
    T_CHECK(
        !rs_gpu_kernel_uses_tensor_cores("vectorized_elementwise_kernel<4, GeluCUDAKernelImpl>"));
}

/* Stall reasons as CUPTI names them (with and without the prefix): waits on memory told from
 * waits on math pipes, scheduling, barriers and the shared-memory/special-function scoreboard. */
static void
memory_reasons(void)
{
    static const char *const memory[] = {
        "smsp__pcsamp_warps_issue_stalled_long_scoreboard", "lg_throttle", "mio_throttle",
        "smsp__pcsamp_warps_issue_stalled_tex_throttle",    "drain",       "imc_miss"};
    static const char *const other[] = {"smsp__pcsamp_warps_issue_stalled_math_pipe_throttle",
                                        "short_scoreboard",
                                        "selected",
                                        "not_selected",
                                        "wait",
                                        "barrier",
                                        "branch_resolving",
                                        "dispatch_stall",
                                        "no_instructions",
                                        "sleeping",
                                        "membar"};

    for (size_t i = 0; i < sizeof memory / sizeof memory[0]; i++)
        T_CHECK(rs_gpu_stall_reason_is_memory(memory[i]));
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
        T_CHECK(!rs_gpu_stall_reason_is_memory(other[i]));
}

int
main(void)
{
    T_RUN(evidence);
    T_RUN(tensor_core_names);
    T_RUN(memory_reasons);
    return T_DONE("unit/query/gpu_evidence");
}
