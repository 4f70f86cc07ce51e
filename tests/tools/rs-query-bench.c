/* Benchmark tool: the cost of a straggler verdict over a long, wide job (issue 5: 1,024 ranks x
 * 1 hour <= 100 ms). Writes a synthetic job into a fresh store through the storage API — per rank
 * and 1 s step: 10 kernels, 4 AllReduce collectives waiting for the slowest rank, one step record;
 * rank RANKS/2 runs its kernels 5% slower during the last 10 minutes — then times
 *   cold: the verdict with no step summaries (every step of the windows computed from kernels);
 *   warm: the verdict after the step summaries are stored, as the server's evaluator stores them
 *         while a job runs (its steady state); median and range of RUNS verdicts.
 * usage: rs-query-bench DIR RANKS SECONDS RUNS   (a DIR that holds the job already is reused:
 * then only the verdicts are timed) */
#include "common/clock.h"
#include "common/error.h"
#include "query/steps.h"
#include "query/stragglers.h"
#include "query/stats.h"
#include "tests/t_batch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KERNELS 10
#define COLLS 4
#define STEP_NS 1000000000ull
#define CHUNK_STEPS 60 /* steps per rank batch */
#define T0 (1700000000ull * 1000000000ull)

static const char *const names[KERNELS + 1] = {
    "gemm_fwd_0", "gemm_fwd_1", "gelu_fwd",   "gemm_fwd_2", "loss",          "gemm_bwd_0",
    "gemm_bwd_1", "gelu_bwd",   "gemm_bwd_2", "optimizer",  "nccl_allreduce"};

static uint64_t rng = 88172645463325252ull;

static double
noise(void) /* 1 +- ~1% */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return 1.0 + ((double)(rng % 2001) - 1000.0) / 100000.0;
}

static int
generate(rs_store *st, uint32_t ranks, uint64_t steps)
{
    struct rs_kernel_record *k = calloc(CHUNK_STEPS * KERNELS, sizeof *k);
    struct rs_collective_record *c = calloc(CHUNK_STEPS * COLLS, sizeof *c);
    struct rs_step_record *s = calloc(CHUNK_STEPS, sizeof *s);
    uint64_t seq = 0, last_report = 0;
    uint32_t slow = ranks / 2;
    int rc = 0;

    if (!k || !c || !s)
        return -ENOMEM;
    for (uint64_t first = 0; first < steps && rc == 0; first += CHUNK_STEPS) {
        rs_store_write *w;
        if ((rc = rs_store_write_begin(st, &w)) != 0)
            break;
        for (uint32_t r = 0; r < ranks && rc == 0; r++) {
            size_t nk = 0, nc = 0, ns = 0;
            for (uint64_t i = first; i < first + CHUNK_STEPS && i < steps; i++) {
                uint64_t t = T0 + i * STEP_NS, at = t + 20000000; /* host gap 20 ms */
                double f = r == slow && i + 600 >= steps ? 1.05 : 1.0;
                for (int q = 0; q < KERNELS; q++) {
                    uint64_t d = (uint64_t)(60000000.0 * f * noise());
                    k[nk++] = (struct rs_kernel_record){at, at + d, (uint32_t)q, 7, 0, 0};
                    at += d + 5000;
                }
                /* AllReduce i starts at this rank's compute end, ends 50 ms after the slowest
                 * rank's (the slow rank arrives last; the others wait) */
                uint64_t slowest = t + 20000000 + (uint64_t)(10 * 60000000.0 * 1.05) + 100000;
                if (!(i + 600 >= steps))
                    slowest = t + 20000000 + (uint64_t)(10 * 60000000.0 * 1.012) + 100000;
                for (int q = 0; q < COLLS; q++)
                    c[nc++] = (struct rs_collective_record){at + (uint64_t)q * 1000,
                                                            slowest + (uint64_t)(q + 1) * 50000000,
                                                            1 << 26,
                                                            0xbe9c4,
                                                            i * COLLS + (uint64_t)q,
                                                            RS_COLL_ALLREDUCE,
                                                            KERNELS,
                                                            17,
                                                            false};
                s[ns++] = (struct rs_step_record){.step = i, .start_ns = t, .end_ns = t + STEP_NS};
            }
            struct rs_rank_batch rb = {
                .identity = T_IDENTITY_OF("bench", r, r % 8, ranks, "node", "GPU-b", 1),
                .clock = {T0, T0},
                T_RECORDS(strings, names, KERNELS + 1),
                T_RECORDS(kernels, k, (uint32_t)nk),
                T_RECORDS(collectives, c, (uint32_t)nc),
                T_RECORDS(steps, s, (uint32_t)ns)};
            struct rs_agent_batch b = t_agent_batch(1, ++seq, &rb, 1);
            bool dup;
            rc = rs_store_write_batch(w, &b, &dup);
        }
        rc = rc ? (rs_store_write_abort(w), rc) : rs_store_write_commit(w);
        if (rs_clock_mono_ns() - last_report > 5000000000ull) {
            last_report = rs_clock_mono_ns();
            fprintf(stderr, "rs-query-bench: generated %llu of %llu steps\n",
                    (unsigned long long)first + CHUNK_STEPS, (unsigned long long)steps);
        }
    }
    free(k);
    free(c);
    free(s);
    return rc;
}

/* One verdict; returns its wall time in ms, or -1. */
static double
verdict_ms(rs_store *st, char *summary, size_t len)
{
    rs_store_read *r;
    json_t *doc = NULL;
    uint64_t t = rs_clock_mono_ns();

    if (rs_store_read_begin(st, &r) != 0)
        return -1;
    int rc = rs_query_stragglers(r, "bench", NULL, &doc);
    rs_store_read_end(r);
    double ms = (double)(rs_clock_mono_ns() - t) / 1e6;
    if (rc != 0)
        return -1;
    json_t *v = json_array_get(json_object_get(doc, "stragglers"), 0);
    snprintf(summary, len, "%s%s%lld%s%s", json_string_value(json_object_get(doc, "summary")),
             v ? ": rank " : "",
             v ? (long long)json_integer_value(json_object_get(v, "rank")) : 0LL,
             v ? ", cause " : "", v ? json_string_value(json_object_get(v, "cause")) : "");
    json_decref(doc);
    return ms;
}

/* What the server's evaluator does while a job runs: stores the settled steps' summaries. */
static int
store_summaries(rs_store *st)
{
    struct rs_straggler_options o;
    struct rs_rank_steps *ranks;
    rs_store_read *r;
    rs_store_write *w;
    size_t n;
    int rc;

    rs_straggler_options_default(&o);
    if ((rc = rs_store_read_begin(st, &r)) != 0)
        return rc;
    rc = rs_query_job_steps(r, "bench", rs_straggler_steps_needed(&o), &ranks, &n);
    rs_store_read_end(r);
    if (rc != 0 || (rc = rs_store_write_begin(st, &w)) != 0)
        return rc;
    for (size_t i = 0; i < n && rc == 0; i++)
        for (size_t k = 0; k < ranks[i].n && rc == 0; k++)
            if (ranks[i].to_store && ranks[i].to_store[k])
                rc = rs_store_step_summaries_put(w, "bench", ranks[i].rank, &ranks[i].steps[k], 1);
    rs_job_steps_free(ranks, n);
    return rc ? (rs_store_write_abort(w), rc) : rs_store_write_commit(w);
}

int
main(int argc, char **argv)
{
    struct rs_store_options so = {.map_size = 1ull << 40};
    char summary[256];
    rs_store *st;
    int rc;

    if (argc != 5) {
        fprintf(stderr, "usage: rs-query-bench DIR RANKS SECONDS RUNS\n");
        return 2;
    }
    uint32_t ranks = (uint32_t)strtoul(argv[2], NULL, 10);
    uint64_t steps = strtoull(argv[3], NULL, 10) * 1000000000ull / STEP_NS;
    int runs = atoi(argv[4]);
    if (ranks < 2 || steps < 700 || runs < 1) {
        fprintf(stderr, "rs-query-bench: need RANKS >= 2, SECONDS >= 700, RUNS >= 1\n");
        return 2;
    }
    if ((rc = rs_store_open(argv[1], &so, &st)) != 0) {
        fprintf(stderr, "rs-query-bench: %s: %s\n", argv[1], rs_strerror(rc));
        return 1;
    }
    uint64_t t = rs_clock_mono_ns(), used = 0;
    rs_store_read *r;
    struct rs_job_info info;
    bool exists = rs_store_read_begin(st, &r) == 0 && rs_store_job_get(r, "bench", &info) == 0;
    rs_store_read_end(r);
    if (exists) {
        printf("reusing the job in %s (%u ranks)\n", argv[1], info.n_ranks);
        goto warm;
    }
    if ((rc = generate(st, ranks, steps)) != 0) {
        fprintf(stderr, "rs-query-bench: generating: %s\n", rs_strerror(rc));
        return 1;
    }
    rs_store_used_bytes(st, &used);
    printf("generated %u ranks x %llu steps of 1 s (%llu kernels, %llu collective records) in "
           "%.0f s; store %.2f GB\n",
           ranks, (unsigned long long)steps, (unsigned long long)(ranks * steps * KERNELS),
           (unsigned long long)(ranks * steps * COLLS), (double)(rs_clock_mono_ns() - t) / 1e9,
           (double)used / 1e9);
    double cold = verdict_ms(st, summary, sizeof summary);
    printf("cold verdict (no step summaries): %.1f ms — %s\n", cold, summary);
    if ((rc = store_summaries(st)) != 0) {
        fprintf(stderr, "rs-query-bench: storing summaries: %s\n", rs_strerror(rc));
        return 1;
    }
warm:;
    double *ms = calloc((size_t)runs, sizeof *ms);
    for (int i = 0; ms && i < runs; i++)
        ms[i] = verdict_ms(st, summary, sizeof summary);
    if (!ms || ms[0] < 0)
        return 1;
    rs_quantile(ms, (size_t)runs, 0.5);
    printf("warm verdict (step summaries stored): median %.1f ms, min %.1f, max %.1f over %d runs "
           "— %s\n",
           rs_quantile(ms, (size_t)runs, 0.5), ms[0], ms[runs - 1], runs, summary);
    free(ms);
    rs_store_close(st);
    return 0;
}
