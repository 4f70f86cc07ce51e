/* Unit tests of the advisor on hand-built jobs whose costs are known by construction. One step
 * (2000 us, 20 steps) of rank 0:
 *   +0     200 us idle                       input_pipeline 200
 *   +200   kernel A to +400; a Stream Sync ends at +400; idle to +550   host_sync 150
 *   +550   kernel B to +700; C +710..+720; D +730..+740                launch 20 (noise)
 *   +740   fp32 sgemm to +1040                                        fp32 300 x (1 - 67/494)
 *   +1040  7 elementwise kernels of 30 us back to back                unfused 210 - 30 = 180
 *   +1250  4 MiB HtoD copy of 400 us (10.5 GB/s)                      pageable 400 - 4 MiB/50 GB/s
 * + 20 +1650  kernel E to +2000 With step markers, then without (steps from the kernel period: the
 * same findings), a clean job (kernels back to back: nothing), two ranks where rank 1 runs 150 us
 * more per step (imbalance), and the kernel-name classes and short names. */
#include "query/advice.h"
#include "query/advice_int.h"
#include "tests/store_fixture.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define US 1000ull
#define T0 (5000000 * US)
#define STEPS 20
#define STEP_US 2000ull

static const char *const names[] = {
    "kernel_A",
    "kernel_B",
    "kernel_C",
    "kernel_D",
    "ampere_sgemm_128x64_nn",
    "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, "
    "float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, "
    "at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> "
    ">, std::array<char*, 2ul>)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, "
    "float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int, "
    "at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> "
    ">, std::array<char*, 3ul>)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::tanh_kernel_cuda(at::"
    "TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::"
    "{lambda(float)#1}, std::array<char*, 2ul> >(int, ...)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::"
    "TensorIteratorBase&, at::native::GeluType)::{lambda()#2}, std::array<char*, 2ul> >(int, ...)",
    "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::"
    "TensorIteratorBase&)::{lambda()#3}, std::array<char*, 2ul> >(int, ...)",
    "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::"
    "FillFunctor<float> >(at::TensorIteratorBase&, at::native::FillFunctor<float> const&)::"
    "{lambda(int)#1}>(int, ...)",
    "kernel_E",
    "kernel_X",
};
enum { A, B, C, D, SGEMM, EW0, EW6 = EW0 + 6, E, X };

struct job_spec {
    const char *job;
    uint32_t rank, world;
    bool markers;
    bool clean;      /* kernels back to back, nothing else */
    bool extra;      /* a 150 us kernel X at the step's start (load imbalance) */
    bool no_kernels; /* step records alone (an agent that summarizes sends windows instead) */
    /* GPU telemetry: NVML readings every 5 ms over the steps with this much memory used of
     * MEM_TOTAL_MIB (0: no readings); no_memory: readings of the clocks only */
    double mem_used_mib;
    bool no_memory;
};

#define MEM_TOTAL_MIB 80000.0

/* NVML readings of the rank's GPU, as an agent sends them (with the rank's identity, so that the
 * store files them under its rank). */
static void
put_readings(rs_store *st, const struct rs_rank_batch *id, const struct job_spec *j)
{
    static uint64_t seq;
    struct rs_gpu_sample g[STEPS * STEP_US / 5000 + 1];
    struct rs_rank_batch rb = {.identity = id->identity};
    size_t n = 0;

    for (uint64_t t = T0; t <= T0 + STEPS * STEP_US * US; t += 5000 * US)
        g[n++] = (struct rs_gpu_sample){
            .uuid = id->identity.gpu_uuid,
            .time_ns = t,
            .present = RS_GPU_SM_CLOCK | RS_GPU_SM_CLOCK_MAX | (j->no_memory ? 0 : RS_GPU_MEMORY),
            .sm_clock_mhz = 1980,
            .sm_clock_max_mhz = 1980,
            /* whole MiB, as the wire carries them; the largest reading counts */
            .mem_used_bytes = (uint64_t)(j->mem_used_mib - (t == T0 ? 0 : 1000)) << 20,
            .mem_total_bytes = (uint64_t)MEM_TOTAL_MIB << 20};
    t_store_put_gpus(st, 0xad01, ++seq, &rb, 1, g, (uint32_t)n);
}

static void
put_job(rs_store *st, const struct job_spec *j)
{
    static struct rs_kernel_record k[STEPS * 20];
    struct rs_memcpy_record m[STEPS * 2];
    struct rs_step_record s[STEPS];
    uint32_t nk = 0, nm = 0;

    for (uint32_t i = 0; i < STEPS; i++) {
        uint64_t t = T0 + i * STEP_US * US;
#define K(name, a, b) (k[nk++] = (struct rs_kernel_record){t + (a)*US, t + (b)*US, name, 7, 0, 0})
        s[i] = (struct rs_step_record){.step = i + 1, .start_ns = t, .end_ns = t + STEP_US * US};
        if (j->no_kernels)
            continue;
        if (j->clean) {
            K(A, 0, 500);
            K(B, 500, 1000);
            K(SGEMM - 3, 1000, 1500); /* kernel_B again: a name of no class */
            K(E, 1500, 2000);
            continue;
        }
        if (j->extra)
            K(X, 0, 150);
        K(A, 200, 400);
        m[nm++] = (struct rs_memcpy_record){t + 350 * US, t + 400 * US, 0, RS_SYNC_STREAM, 7};
        K(B, 550, 700);
        K(C, 710, 720);
        K(D, 730, 740);
        K(SGEMM, 740, 1040);
        for (uint32_t e = 0; e < 7; e++)
            K(EW0 + e, 1040 + 30 * e, 1070 + 30 * e);
        m[nm++] =
            (struct rs_memcpy_record){t + 1250 * US, t + 1650 * US, 4u << 20, RS_COPY_HTOD, 7};
        K(E, 1650, 2000);
#undef K
    }
    char uuid[64];
    snprintf(uuid, sizeof uuid, "GPU-%s-%u", j->job, j->rank);
    struct rs_rank_batch rb = {
        .identity = T_IDENTITY_OF(j->job, j->rank, j->rank, j->world, "node", uuid, 1),
        .clock = {T0, T0},
        .strings = names,
        .n_strings = sizeof names / sizeof names[0],
        .kernels = k,
        .n_kernels = nk,
        .memcpys = m,
        .n_memcpys = nm,
        .steps = s,
        .n_steps = j->markers ? STEPS : 0};
    t_store_put(st, &rb, 1);
    if (j->mem_used_mib > 0 || j->no_memory)
        put_readings(st, &rb, j);
}

static const struct rs_advice_finding *
find(const struct rs_advice *a, enum rs_advice_kind k)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->findings[i].kind == k)
            return &a->findings[i];
    return NULL;
}

static bool
near(uint64_t got, double want_us)
{
    return fabs((double)got / 1e3 - want_us) < 0.5;
}

static void
check_planted(const struct rs_advice *a)
{
    const struct rs_advice_finding *f;
    double pageable = 400.0 - (double)(4u << 20) / 50.0 / 1e3 + 20.0;
    double fp32 = 300.0 * (1.0 - 67.0 / 494.0);

    T_EQ(a->n, 5);
    T_CHECK((f = find(a, RS_ADVICE_PAGEABLE_COPY)) && near(f->cost_ns, pageable));
    T_CHECK((f = find(a, RS_ADVICE_FP32_GEMM)) && near(f->cost_ns, fp32));
    T_CHECK((f = find(a, RS_ADVICE_INPUT)) && near(f->cost_ns, 200));
    T_CHECK((f = find(a, RS_ADVICE_UNFUSED)) && near(f->cost_ns, 180) && f->n_names == 7);
    T_CHECK((f = find(a, RS_ADVICE_HOST_SYNC)) && near(f->cost_ns, 150) && f->seen[0] == 1);
    T_CHECK(!find(a, RS_ADVICE_LAUNCH_BOUND)); /* 20 us of 2000: noise */
    T_CHECK(a->below_threshold >= 1);
    /* ranked by cost */
    for (size_t i = 1; i < a->n; i++)
        T_CHECK(a->findings[i - 1].cost_ns >= a->findings[i].cost_ns);
    T_CHECK(a->n > 0 && a->findings[0].kind == RS_ADVICE_PAGEABLE_COPY);
    f = find(a, RS_ADVICE_UNFUSED);
    if (f && f->n_names == 7) {
        T_CHECK(strcmp(f->names[0], "AUnaryFunctor") == 0);
        T_CHECK(strcmp(f->names[2], "tanh_kernel_cuda") == 0);
        T_CHECK(strcmp(f->names[4], "GeluCUDAKernelImpl") == 0);
        T_CHECK(strcmp(f->names[6], "FillFunctor") == 0);
    }
}

static void
with_markers(void)
{
    char dir[] = "/tmp/rs-advice-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    rs_store_read *r;
    struct rs_advice *a;

    put_job(st, &(struct job_spec){"adv", 0, 1, true, false, false, false, 0, false});
    T_OK(rs_store_read_begin(st, &r));
    T_OK(rs_query_advice(r, "adv", 0, &a));
    T_CHECK(strcmp(a->steps_source, "markers") == 0);
    T_EQ(a->steps_analysed, STEPS);
    T_EQ(a->median_step_ns, STEP_US * US);
    check_planted(a);
    json_t *doc = rs_advice_json("adv", a);
    T_CHECK(doc && json_array_size(json_object_get(doc, "findings")) == 5);
    json_t *first = json_array_get(json_object_get(doc, "findings"), 0);
    T_CHECK(strcmp(json_string_value(json_object_get(first, "kind")), "pageable_copy") == 0);
    T_CHECK(json_object_get(json_object_get(first, "seen"), "gb_per_s") != NULL);
    json_decref(doc);
    rs_advice_free(a);
    T_EQ(rs_query_advice(r, "nosuchjob", 0, &a), RS_E_NOT_FOUND);
    rs_store_read_end(r);
    t_store_remove(st, dir);
}

/* No markers, no NCCL: steps from the kernel period, the step start at the longest idle. */
static void
from_kernel_period(void)
{
    char dir[] = "/tmp/rs-advice-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    rs_store_read *r;
    struct rs_advice *a;

    put_job(st, &(struct job_spec){"adv", 0, 1, false, false, false, false, 0, false});
    T_OK(rs_store_read_begin(st, &r));
    T_OK(rs_query_advice(r, "adv", 0, &a));
    T_CHECK(strcmp(a->steps_source, "kernel_period") == 0);
    T_CHECK(a->steps_analysed >= STEPS - 2 && a->steps_analysed <= STEPS - 1);
    T_EQ(a->median_step_ns, STEP_US * US);
    check_planted(a);
    rs_advice_free(a);
    rs_store_read_end(r);
    t_store_remove(st, dir);
}

static void
clean(void)
{
    char dir[] = "/tmp/rs-advice-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    rs_store_read *r;
    struct rs_advice *a;

    put_job(st, &(struct job_spec){"clean", 0, 1, true, true, false, false, 0, false});
    T_OK(rs_store_read_begin(st, &r));
    T_OK(rs_query_advice(r, "clean", 0, &a));
    T_EQ(a->n, 0);
    T_EQ(a->below_threshold, 0);
    rs_advice_free(a);
    rs_store_read_end(r);
    t_store_remove(st, dir);
}

/* Steps without kernel records say nothing about idle: no finding, and the answer says so. */
static void
without_kernels(void)
{
    char dir[] = "/tmp/rs-advice-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    rs_store_read *r;
    struct rs_advice *a;

    put_job(st, &(struct job_spec){"bare", 0, 1, true, false, false, true, 0, false});
    T_OK(rs_store_read_begin(st, &r));
    T_OK(rs_query_advice(r, "bare", 0, &a));
    T_EQ(a->n, 0);
    T_EQ(a->ranks_without_kernels, 1);
    json_t *doc = rs_advice_json("bare", a);
    json_t *sk = json_object_get(doc, "skipped"), *x;
    size_t i;
    bool said = false;
    json_array_foreach(sk, i, x) said |=
        strcmp(json_string_value(json_object_get(x, "kind")), "timeline") == 0;
    T_CHECK(said);
    json_decref(doc);
    rs_advice_free(a);
    rs_store_read_end(r);
    t_store_remove(st, dir);
}

static void
imbalance(void)
{
    char dir[] = "/tmp/rs-advice-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    rs_store_read *r;
    struct rs_advice *a;
    const struct rs_advice_finding *f;

    put_job(st, &(struct job_spec){"two", 0, 2, true, false, false, false, 0, false});
    put_job(st, &(struct job_spec){"two", 1, 2, true, false, true, false, 0, false});
    T_OK(rs_store_read_begin(st, &r));
    T_OK(rs_query_advice(r, "two", 0, &a));
    T_CHECK((f = find(a, RS_ADVICE_LOAD_IMBALANCE)) && f->rank == 1 && near(f->cost_ns, 150));
    /* rank 1's step starts with its extra kernel: its input idle is 50 us; rank 0's counts */
    T_CHECK((f = find(a, RS_ADVICE_INPUT)) && f->rank == 0 && f->ranks == 1);
    T_CHECK((f = find(a, RS_ADVICE_FP32_GEMM)) && f->ranks == 2);
    rs_advice_free(a);
    /* one rank's findings: rank 0 has the input idle, not the imbalance (rank 1's) */
    T_OK(rs_query_advice_rank(r, "two", 0, 0, &a));
    T_CHECK((f = find(a, RS_ADVICE_INPUT)) && f->rank == 0);
    T_CHECK(!find(a, RS_ADVICE_LOAD_IMBALANCE) && a->ranks_with_steps == 1 && a->rank == 0);
    for (size_t i = 0; i < a->n; i++)
        T_EQ(a->findings[i].rank, 0);
    rs_advice_free(a);
    T_OK(rs_query_advice_rank(r, "two", 0, 1, &a));
    T_CHECK((f = find(a, RS_ADVICE_LOAD_IMBALANCE)) && f->rank == 1 && !find(a, RS_ADVICE_INPUT));
    json_t *doc = rs_advice_json("two", a);
    T_EQ(json_integer_value(json_object_get(doc, "rank")), 1);
    json_decref(doc);
    rs_advice_free(a);
    T_EQ(rs_query_advice_rank(r, "two", 0, 7, &a), RS_E_NOT_FOUND);
    rs_store_read_end(r);
    t_store_remove(st, dir);
}

static void
kernel_classes(void)
{
    char s[RS_ADVICE_NAME_LEN];

    T_EQ(rs__advice_kernel_class(names[EW0]), RS__ADVICE_K_ELEMENTWISE);
    T_EQ(rs__advice_kernel_class(names[EW0 + 5]), RS__ADVICE_K_ELEMENTWISE);
    T_EQ(rs__advice_kernel_class("ampere_sgemm_128x64_nn"), RS__ADVICE_K_GEMM_FP32);
    T_EQ(rs__advice_kernel_class("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_"
                                 "warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas"),
         RS__ADVICE_K_GEMM_FP32);
    T_EQ(rs__advice_kernel_class("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_"
                                 "align1>(cutlass_80_simt_sgemm_128x256_8x4_nt_align1::Params)"),
         RS__ADVICE_K_GEMM_FP32);
    /* tensor cores: TF32, bf16, Hopper's nvjet */
    T_EQ(rs__advice_kernel_class("sm80_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x16"),
         RS__ADVICE_K_OTHER);
    T_EQ(rs__advice_kernel_class("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"),
         RS__ADVICE_K_OTHER);
    T_EQ(rs__advice_kernel_class("triton_poi_fused_add_mul_tanh_0"), RS__ADVICE_K_OTHER);
    rs__advice_short_name(names[EW0 + 4], s, sizeof s);
    T_CHECK(strcmp(s, "GeluCUDAKernelImpl") == 0);
    rs__advice_short_name(names[EW0 + 5], s, sizeof s);
    T_CHECK(strcmp(s, "direct_copy_kernel_cuda") == 0);
    rs__advice_short_name("void cutlass::Kernel2<x>(y)", s, sizeof s);
    T_CHECK(strcmp(s, "cutlass::Kernel2") == 0);
    rs__advice_short_name("plain", s, 3); /* cut to the buffer */
    T_CHECK(strcmp(s, "pl") == 0);
}

/* The skipped entry of `kind` in the advice's JSON, or NULL. */
static const char *
skipped_why(const struct rs_advice *a, const char *kind)
{
    static char why[400];
    json_t *doc = rs_advice_json("j", a), *x;
    size_t i;
    const char *found = NULL;

    json_array_foreach(json_object_get(doc, "skipped"), i, x)
    {
        if (strcmp(json_string_value(json_object_get(x, "kind")), kind) == 0) {
            snprintf(why, sizeof why, "%s", json_string_value(json_object_get(x, "why")));
            found = why;
        }
    }
    json_decref(doc);
    return found;
}

/* Advice of one job put by `specs` (n ranks). */
static struct rs_advice *
advice_of(const struct job_spec *specs, size_t n)
{
    char dir[] = "/tmp/rs-advice-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    rs_store_read *r;
    struct rs_advice *a = NULL;

    for (size_t i = 0; i < n; i++)
        put_job(st, &specs[i]);
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_query_advice(r, specs[0].job, 0, &a), 0);
    rs_store_read_end(r);
    t_store_remove(st, dir);
    return a;
}

/* Advice of the planted job on two ranks whose GPUs used these MiB. */
static struct rs_advice *
two_ranks(double used0, double used1)
{
    return advice_of(
        (struct job_spec[]){
            {.job = "two", .world = 2, .markers = true, .mem_used_mib = used0},
            {.job = "two", .rank = 1, .world = 2, .markers = true, .mem_used_mib = used1}},
        2);
}

/* Batch size: the planted job idles 170 us a step between kernels and after its sync (20 + 150);
 * its GPU used at most 10,000 of 80,000 MiB, so 6 times the batch fits in 80% of it, and a 6x
 * batch spreads that idle over 6 times the samples: 170 x (1 - 1/6) = 141.7 us per current step. */
static void
batch_size(void)
{
    const struct rs_advice_finding *f;
    struct rs_advice *a;

    a = advice_of(
        &(struct job_spec){.job = "roomy", .world = 1, .markers = true, .mem_used_mib = 10000}, 1);
    T_CHECK((f = find(a, RS_ADVICE_BATCH_SIZE)) != NULL);
    if (f) {
        T_CHECK(near(f->cost_ns, 170.0 * 5 / 6));
        T_CHECK(f->seen[0] == 10000 && f->seen[1] == MEM_TOTAL_MIB && f->seen[3] == 6);
        T_CHECK(fabs(f->seen[2] - 100.0 * 170 / 2000) < 0.01);
        T_EQ(f->step_ns, STEP_US * US);
    }
    T_EQ(a->ranks_with_memory, 1);
    T_CHECK(skipped_why(a, "batch_size") == NULL);
    json_t *doc = rs_advice_json("roomy", a), *x;
    size_t i;
    bool said = false;
    json_array_foreach(json_object_get(doc, "findings"), i, x)
    {
        if (strcmp(json_string_value(json_object_get(x, "kind")), "batch_size") == 0)
            said =
                json_real_value(json_object_get(json_object_get(x, "seen"), "batch_factor")) == 6 &&
                json_object_get(json_object_get(x, "seen"), "memory_used_mib") != NULL;
    }
    T_CHECK(said);
    json_decref(doc);
    rs_advice_free(a);

    /* 30,000 MiB: twice fits (2.13x), 170 x 1/2 = 85 us is 4.3% of the step: noise */
    a = advice_of(
        &(struct job_spec){.job = "half", .world = 1, .markers = true, .mem_used_mib = 30000}, 1);
    T_CHECK(!find(a, RS_ADVICE_BATCH_SIZE) && a->batch_factor == 2);
    T_CHECK(skipped_why(a, "batch_size") == NULL);
    rs_advice_free(a);

    /* near full: 40,000 MiB (1.6x) and 70,000: never, and said why with the numbers */
    a = advice_of(
        &(struct job_spec){.job = "full", .world = 1, .markers = true, .mem_used_mib = 70000}, 1);
    T_CHECK(!find(a, RS_ADVICE_BATCH_SIZE) && a->batch_factor == 0);
    const char *why = skipped_why(a, "batch_size");
    T_CHECK(why && strstr(why, "memory near full: rank 0's GPU used 70000 of 80000 MiB (88%)"));
    rs_advice_free(a);
    a = advice_of(
        &(struct job_spec){.job = "full", .world = 1, .markers = true, .mem_used_mib = 40000}, 1);
    T_CHECK(!find(a, RS_ADVICE_BATCH_SIZE) && skipped_why(a, "batch_size"));
    rs_advice_free(a);

    /* no readings, or readings without memory: skipped, no finding */
    a = advice_of(&(struct job_spec){.job = "blind", .world = 1, .markers = true}, 1);
    T_CHECK(!find(a, RS_ADVICE_BATCH_SIZE) && a->ranks_with_memory == 0);
    T_CHECK((why = skipped_why(a, "batch_size")) && strstr(why, "no GPU memory telemetry"));
    rs_advice_free(a);
    a = advice_of(
        &(struct job_spec){.job = "clocks", .world = 1, .markers = true, .no_memory = true}, 1);
    T_CHECK(!find(a, RS_ADVICE_BATCH_SIZE) && a->ranks_with_memory == 0);
    rs_advice_free(a);

    /* a clean job with room: nothing idles, nothing to say */
    a = advice_of(
        &(struct job_spec){
            .job = "clean", .world = 1, .markers = true, .clean = true, .mem_used_mib = 10000},
        1);
    T_EQ(a->n, 0);
    rs_advice_free(a);

    /* two ranks: the fullest GPU sets the multiple; one near full stops it for the job */
    a = two_ranks(10000, 20000);
    T_CHECK((f = find(a, RS_ADVICE_BATCH_SIZE)) && f->ranks == 2 && f->seen[3] == 3 &&
            f->seen[0] == 20000 && near(f->cost_ns, 170.0 * 2 / 3));
    T_EQ(a->ranks_with_memory, 2);
    rs_advice_free(a);
    a = two_ranks(10000, 50000);
    T_CHECK(!find(a, RS_ADVICE_BATCH_SIZE));
    T_CHECK((why = skipped_why(a, "batch_size")) && strstr(why, "rank 1's GPU used 50000"));
    rs_advice_free(a);
}

int
main(void)
{
    T_RUN(with_markers);
    T_RUN(from_kernel_period);
    T_RUN(clean);
    T_RUN(without_kernels);
    T_RUN(imbalance);
    T_RUN(kernel_classes);
    T_RUN(batch_size);
    return T_DONE("advice");
}
