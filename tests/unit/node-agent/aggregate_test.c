/* Unit tests of the agent's per-rank aggregation: frames of several ranks merge into one
 * request with names re-interned per rank; flushing empties it. */
#include "common/clock.h"
#include "common/error.h"
#include "node-agent/aggregate.h"
#include "node-agent/summary.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <stdlib.h>
#include <string.h>

static struct rs_rank_batch
frame(const char *const *names, uint32_t n_names, uint32_t rank, struct rs_kernel_record *k)
{
    return (struct rs_rank_batch){.identity = T_IDENTITY("job", rank, 4, "GPU"),
                                  T_RECORDS(strings, names, n_names),
                                  T_RECORDS(kernels, k, 1),
                                  .dropped_records = rank};
}

/* The ranks of a decoded batch: rank -> index (-1: not in it). */
static int
rank_in(const struct rs_agent_batch *b, uint32_t rank)
{
    for (uint32_t i = 0; i < b->n_ranks; i++)
        if (b->ranks[i].identity.rank == rank)
            return (int)i;
    return -1;
}

/* Flushes a and decodes the batch into *d (NULL and RS_E_NOT_FOUND when there is nothing); a
 * batch that was encoded lost no records. */
static int
flush_decoded(rs_aggregate *a, rs_wire_agent_batch **d)
{
    struct rs_agent_batch env = {
        .agent_id = 1,
        .boot_id = 2,
        .batch_seq = 3,
        .hello = {.agent_id = 1, .boot_id = 2, .host = "h", .agent_version = "v", .clock = {0, 0}},
        .ranks = NULL,
        .n_ranks = 0,
        .agent_dropped = 0};
    uint8_t *buf = NULL;
    size_t len = 0;
    uint64_t lost = UINT64_MAX; /* the flush must set it */
    int rc = rs_aggregate_flush(a, &env, &buf, &len, &lost);

    *d = NULL;
    if (rc == 0) {
        T_EQ(lost, 0);
        T_EQ(rs_wire_agent_batch_decode(buf, len, d), 0);
    }
    free(buf);
    return rc;
}

static void
merges_per_rank(void)
{
    static const char *const n1[] = {"a", "b"}, *const n2[] = {"b"};
    struct rs_kernel_record k1 = {10, 20, 1, 7, 0, 0}, k2 = {30, 40, 0, 7, 0, 0};
    rs_aggregate *a = NULL;
    rs_wire_agent_batch *d = NULL;

    T_OK(rs_aggregate_new(&a));
    struct rs_rank_batch f1 = frame(n1, 2, 0, &k1), f2 = frame(n2, 1, 0, &k2),
                         f3 = frame(n2, 1, 2, &k2);
    T_OK(rs_aggregate_add(a, &f1));
    T_OK(rs_aggregate_add(a, &f2));
    T_OK(rs_aggregate_add(a, &f3));
    T_EQ(rs_aggregate_pending_records(a), 3);
    T_CHECK(rs_aggregate_pending_bytes(a) > 0);
    T_EQ(flush_decoded(a, &d), 0);
    if (d) {
        const struct rs_agent_batch *b = rs_wire_agent_batch_get(d);
        T_EQ(b->n_ranks, 2);
        const struct rs_rank_batch *r0 = &b->ranks[0];
        T_EQ(r0->identity.rank, 0);
        T_EQ(r0->n_kernels, 2);
        /* both kernels are named "b", now through one shared id */
        T_CHECK(strcmp(r0->strings[r0->kernels[0].name_id], "b") == 0);
        T_CHECK(strcmp(r0->strings[r0->kernels[1].name_id], "b") == 0);
        T_EQ(b->ranks[1].identity.rank, 2);
        T_EQ(b->ranks[1].dropped_records, 2);
    }
    rs_wire_agent_batch_free(d);
    T_OK(rs_aggregate_pending_records(a));
    T_EQ(flush_decoded(a, &d), RS_E_NOT_FOUND);
    rs_aggregate_free(a);
}

/* More ranks than the first allocation of slots: the slot array moves (regression: identities
 * once pointed into the old array, and whole batches were dropped as malformed). */
static void
many_ranks(void)
{
    static const char *const n1[] = {"k"};
    static char jobs[2][8] = {"job-a", "job-b"};
    struct rs_kernel_record k = {10, 20, 0, 7, 0, 0};
    rs_aggregate *a = NULL;
    rs_wire_agent_batch *d = NULL;

    T_OK(rs_aggregate_new(&a));
    for (uint32_t j = 0; j < 2; j++)
        for (uint32_t r = 0; r < 20; r++) {
            struct rs_rank_batch f = {.identity = T_IDENTITY(jobs[j], r, 20, "GPU"),
                                      T_RECORDS(strings, n1, 1),
                                      T_RECORDS(kernels, &k, 1)};
            T_OK(rs_aggregate_add(a, &f));
        }
    T_EQ(flush_decoded(a, &d), 0);
    if (d) {
        const struct rs_agent_batch *b = rs_wire_agent_batch_get(d);
        T_EQ(b->n_ranks, 40);
        T_CHECK(strcmp(b->ranks[0].identity.job, "job-a") == 0);
        T_CHECK(strcmp(b->ranks[39].identity.job, "job-b") == 0);
    }
    rs_wire_agent_batch_free(d);
    rs_aggregate_free(a);
}

/* With a demangler, C++ kernel names leave the agent readable; other names pass unchanged, and
 * so does a mangled-looking name that does not demangle. */
static void
demangles_names(void)
{
    static const char *const names[] = {"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_"
                                        "15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_",
                                        "sm90_xmma_gemm_f32f32", "_Znot_a_name"};
    struct rs_kernel_record k = {10, 20, 0, 7, 0, 0};
    rs_aggregate *a = NULL;
    rs_demangler *dm = NULL;
    rs_wire_agent_batch *d = NULL;

    T_OK(rs_aggregate_new(&a));
    T_OK(rs_demangler_new(&dm));
    rs_aggregate_set_demangler(a, dm);
    struct rs_rank_batch f = frame(names, 3, 0, &k);
    T_OK(rs_aggregate_add(a, &f));
    T_OK(rs_aggregate_add(a, &f)); /* the second time from the cache */
    T_EQ(flush_decoded(a, &d), 0);
    if (d) {
        const struct rs_rank_batch *r = &rs_wire_agent_batch_get(d)->ranks[0];
        T_CHECK(strcmp(r->strings[r->kernels[0].name_id],
                       "void at::native::vectorized_elementwise_kernel<4, "
                       "at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, "
                       "at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)") == 0);
    }
    T_CHECK(strcmp(rs_demangler_name(dm, "sm90_xmma_gemm_f32f32"), "sm90_xmma_gemm_f32f32") == 0);
    T_CHECK(strcmp(rs_demangler_name(dm, "_Znot_a_name"), "_Znot_a_name") == 0);
    /* a PyTorch kernel seen on an H200 that demangles to 5,050 bytes, and the same with another
     * lambda number: cut to the wire's limit, readable, and still two names */
    static const char long_name[] =
        "_ZN2at6native54_GLOBAL__N__d8ceb000_21_DistributionNormal_cu_0c5b6e8543distribution_"
        "elementwise_grid_stride_kernelIfLi4EZNS0_9templates4cuda20normal_and_transformIffPNS_"
        "17CUDAGeneratorImplEZZZNS4_13normal_kernelIS7_EEvRKNS_10TensorBaseEddT_ENKUlvE_clEvENKUl"
        "vE0_clEvEUlfE_EEvRNS_18TensorIteratorBaseET1_T2_EUlP24curandStatePhilox4_32_10E0_ZNS1_"
        "27distribution_nullary_kernelIff6float4S7_SM_SF_EEvSH_SJ_RKT3_T4_EUlifE_EEvlNS_"
        "15PhiloxCudaStateESI_SJ_";
    char other[sizeof long_name];
    memcpy(other, long_name, sizeof long_name);
    strstr(other, "UlvE0_")[4] = '1'; /* {lambda()#2} becomes {lambda()#3} */
    const char *a1 = rs_demangler_name(dm, long_name), *a2 = rs_demangler_name(dm, other);
    T_CHECK(strlen(a1) == RS_WIRE_MAX_STRING_LEN && strlen(a2) == RS_WIRE_MAX_STRING_LEN);
    T_CHECK(strncmp(a1,
                    "void at::native::(anonymous namespace)::distribution_elementwise_grid_"
                    "stride_kernel<float, 4, ",
                    60) == 0);
    T_CHECK(strcmp(a1 + strlen(a1) - 1, "]") == 0 && strstr(a1, " ... [") != NULL);
    T_CHECK(strcmp(a1, a2) != 0);
    rs_wire_agent_batch_free(d);
    rs_aggregate_free(a);
    rs_demangler_free(dm);
}

/* With summaries on, a rank's records wait up to RS_SUMMARY_SETTLE_NS for its first step marker:
 * kernels handed over before the marker of their step are summarized, not sent as records; a rank
 * that marks no steps sends its records as they are once that time has passed, and its next ones
 * wait again. */
static void
first_records_wait_for_a_marker(void)
{
    static const char *const n1[] = {"gemm"};
    const uint64_t ms = 1000000, t = 1700000000ull * 1000000000ull;
    struct rs_kernel_record early[2] = {{t + 100 * ms, t + 110 * ms, 0, 7, 0, 0},
                                        {t + 200 * ms, t + 210 * ms, 0, 7, 0, 0}};
    struct rs_kernel_record later = {t + 300 * ms, t + 310 * ms, 0, 7, 0, 0};
    struct rs_step_record step = {.step = 1, .start_ns = t + 50 * ms, .end_ns = t + 400 * ms};
    rs_aggregate *a = NULL;
    rs_wire_agent_batch *d = NULL;

    T_OK(rs_aggregate_new(&a));
    rs_aggregate_set_summary(a, 1000 * ms);
    for (uint32_t r = 0; r < 2; r++) { /* rank 0 marks its steps, rank 1 never does */
        struct rs_rank_batch f = {.identity = T_IDENTITY("job", r, 2, "GPU"),
                                  T_RECORDS(strings, n1, 1),
                                  T_RECORDS(kernels, early, 2)};
        T_OK(rs_aggregate_add(a, &f));
    }
    T_EQ(flush_decoded(a, &d), RS_E_NOT_FOUND); /* both wait */
    struct rs_rank_batch marked = {.identity = T_IDENTITY("job", 0, 2, "GPU"),
                                   T_RECORDS(strings, n1, 1),
                                   T_RECORDS(kernels, &later, 1),
                                   T_RECORDS(steps, &step, 1)};
    T_OK(rs_aggregate_add(a, &marked));
    T_EQ(flush_decoded(a, &d), 0);
    if (d) { /* rank 0 summarizes all three (its windows are not settled yet); rank 1 waits */
        const struct rs_agent_batch *b = rs_wire_agent_batch_get(d);
        int i = rank_in(b, 0);
        T_CHECK(i >= 0 && b->ranks[i].n_kernels == 0);
        T_EQ(rank_in(b, 1), -1);
    }
    rs_wire_agent_batch_free(d);
    rs_clock_sleep_ns(RS_SUMMARY_SETTLE_NS + 100 * ms);
    rs_aggregate_close_windows(a);
    T_EQ(flush_decoded(a, &d), 0);
    if (d) {
        const struct rs_agent_batch *b = rs_wire_agent_batch_get(d);
        int i0 = rank_in(b, 0), i1 = rank_in(b, 1);
        uint64_t summarized = 0;
        T_CHECK(i0 >= 0 && i1 >= 0);
        for (uint32_t k = 0; i0 >= 0 && k < b->ranks[i0].n_kernel_totals; k++)
            summarized += b->ranks[i0].kernel_totals[k].count;
        T_EQ(summarized, 3);
        T_CHECK(i0 >= 0 && b->ranks[i0].n_kernels == 0);
        T_CHECK(i1 >= 0 && b->ranks[i1].n_kernels == 2 && b->ranks[i1].n_kernel_totals == 0);
    }
    rs_wire_agent_batch_free(d);
    /* rank 1's next records wait again: a marker may still come */
    struct rs_rank_batch more = {.identity = T_IDENTITY("job", 1, 2, "GPU"),
                                 T_RECORDS(strings, n1, 1),
                                 T_RECORDS(kernels, &later, 1)};
    T_OK(rs_aggregate_add(a, &more));
    T_EQ(flush_decoded(a, &d), RS_E_NOT_FOUND);
    rs_aggregate_free(a);
}

/* Numbered frames (loss accounting): the agent counts the numbers it never saw, per collector,
 * and sends each collector's merged count and highest number; a restarted rank (another
 * collector handle) is numbered apart. */
static void
counts_frame_gaps(void)
{
    static const char *const n1[] = {"a"};
    struct rs_kernel_record k = {10, 20, 0, 7, 0, 0};
    rs_aggregate *a = NULL;
    rs_wire_agent_batch *d = NULL;
    struct rs_rank_batch f = frame(n1, 1, 0, &k);

    T_OK(rs_aggregate_new(&a));
    f.collector_id = 77;
    f.frames = 1;
    f.frame_records = 1;
    const uint64_t seqs[] = {1, 2, 5, 6}; /* 3 and 4 never arrive */
    for (size_t i = 0; i < 4; i++) {
        f.frame_seq = seqs[i];
        f.records_sent = seqs[i]; /* one record a frame */
        T_OK(rs_aggregate_add(a, &f));
    }
    struct rs_rank_batch other = f; /* the rank restarted: a new handle, numbered from 1 */
    other.collector_id = 78;
    other.frame_seq = other.records_sent = 1;
    T_OK(rs_aggregate_add(a, &other));
    T_EQ(rs_aggregate_frame_gaps(a), 2);
    T_EQ(flush_decoded(a, &d), 0);
    if (d) {
        const struct rs_agent_batch *b = rs_wire_agent_batch_get(d);
        T_EQ(b->n_ranks, 2);
        for (uint32_t i = 0; i < b->n_ranks; i++) {
            const struct rs_rank_batch *r = &b->ranks[i];
            bool first = r->collector_id == 77;
            T_EQ(r->frame_seq, first ? 6 : 1);
            T_EQ(r->records_sent, first ? 6 : 1);
            T_EQ(r->frames, first ? 4 : 1);
            T_EQ(r->frame_records, first ? 4 : 1);
        }
    }
    rs_wire_agent_batch_free(d);
    /* after a flush the count starts again; the numbers go on */
    f.frame_seq = f.records_sent = 8;
    T_OK(rs_aggregate_add(a, &f));
    T_EQ(rs_aggregate_frame_gaps(a), 3);
    T_EQ(flush_decoded(a, &d), 0);
    if (d) {
        const struct rs_agent_batch *b = rs_wire_agent_batch_get(d);
        T_EQ(b->n_ranks, 1);
        T_EQ(b->ranks[0].frames, 1);
        T_EQ(b->ranks[0].frame_seq, 8);
    }
    rs_wire_agent_batch_free(d);
    rs_aggregate_free(a);
}

/* A capture's records are counted as its marked frames come, not by the batch that carries the
 * mark: with summaries on, the marked frame's kernels go into the rank's summary and leave later
 * as totals of a settled window, in a batch no longer marked — the marked batch holds none of
 * them (what the server counted before: 0 and 554 kernels for 5-s captures on the H100) — while
 * stall samples go as they are. Unmarked frames count for nothing; after a flush the count starts
 * again. */
static void
capture_counts_frames_not_batches(void)
{
    static const char *const names[] = {"gemm", "selected"};
    const uint64_t ms = 1000000, t = 1700000000ull * 1000000000ull;
    struct rs_kernel_record before = {t + 100 * ms, t + 110 * ms, 0, 7, 0, 0};
    struct rs_kernel_record traced[2] = {{t + 300 * ms, t + 310 * ms, 0, 7, 0, 0},
                                         {t + 320 * ms, t + 330 * ms, 0, 7, 0, 0}};
    struct rs_step_record step = {.step = 1, .start_ns = t + 50 * ms, .end_ns = t + 400 * ms};
    struct rs_stall_record stall = {.pc_offset = 16, .count = 50, .kernel_name_id = 0,
                                    .reason_id = 1};
    rs_aggregate *a = NULL;
    rs_wire_agent_batch *d = NULL;

    T_OK(rs_aggregate_new(&a));
    rs_aggregate_set_summary(a, 1000 * ms);
    struct rs_rank_batch plain = {.identity = T_IDENTITY("job", 0, 2, "GPU"),
                                  T_RECORDS(strings, names, 1), T_RECORDS(kernels, &before, 1),
                                  T_RECORDS(steps, &step, 1)};
    T_OK(rs_aggregate_add(a, &plain));
    T_EQ(flush_decoded(a, &d), 0);
    if (d) {
        const struct rs_rank_batch *r = &rs_wire_agent_batch_get(d)->ranks[0];
        T_CHECK(!r->capture_id && !r->has_capture_count);
    }
    rs_wire_agent_batch_free(d);
    struct rs_rank_batch marked = {.identity = T_IDENTITY("job", 0, 2, "GPU"),
                                   T_RECORDS(strings, names, 2), T_RECORDS(kernels, traced, 2),
                                   T_RECORDS(stalls, &stall, 1), .capture_id = 9};
    T_OK(rs_aggregate_add(a, &marked));
    T_OK(rs_aggregate_add(a, &marked)); /* two frames in one flush */
    T_EQ(flush_decoded(a, &d), 0);
    if (d) {
        const struct rs_rank_batch *r = &rs_wire_agent_batch_get(d)->ranks[0];
        T_EQ(r->capture_id, 9);
        T_EQ(r->n_kernels + r->n_kernel_totals, 0); /* summarized: out later, unmarked */
        T_CHECK(r->has_capture_count);
        T_EQ(r->capture_kernels, 4);
        T_EQ(r->capture_stall_samples, 100);
    }
    rs_wire_agent_batch_free(d);
    marked.n_stalls = 0;
    T_OK(rs_aggregate_add(a, &marked));
    T_EQ(flush_decoded(a, &d), 0);
    if (d) {
        const struct rs_rank_batch *r = &rs_wire_agent_batch_get(d)->ranks[0];
        T_EQ(r->capture_kernels, 2);
        T_EQ(r->capture_stall_samples, 0);
    }
    rs_wire_agent_batch_free(d);
    rs_aggregate_free(a);
}

int
main(void)
{
    T_RUN(demangles_names);
    T_RUN(merges_per_rank);
    T_RUN(counts_frame_gaps);
    T_RUN(many_ranks);
    T_RUN(first_records_wait_for_a_marker);
    T_RUN(capture_counts_frames_not_batches);
    return T_DONE("node-agent/aggregate");
}
