/* Synthetic jobs for the straggler rule's tests (query/stragglers, server/evaluator), built record
 * by record: T_STRAGGLER_RANKS ranks, steps of 1 ms; from step `onset` on, one rank's kernels run
 * 10% longer (T_SLOW_GPU) or start 100 us late (T_LATE_HOST; its collectors also record launch
 * waits: 100 us before the late rank's first kernel, 5 us before the others'). Each rank's
 * AllReduce ends when the slowest rank's compute is done, as in NCCL, so the late rank waits
 * least. */
#ifndef RS_TESTS_STRAGGLER_FIXTURE_H
#define RS_TESTS_STRAGGLER_FIXTURE_H

#include "storage/store.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define T_STRAGGLER_RANKS 3
#define T_US 1000ull

enum t_fault { T_NO_FAULT, T_SLOW_GPU, T_LATE_HOST };

/* Commits steps first .. last - 1 of ranks rank_lo .. rank_hi - 1 of `job` (of
 * T_STRAGGLER_RANKS), with `fault` on rank bad_rank from step `onset` on, one agent batch per
 * rank. */
static inline void
t_straggler_put_ranks(rs_store *st, const char *job, enum t_fault job_fault, uint32_t bad_rank,
                      uint32_t onset, uint32_t first, uint32_t last, uint32_t rank_lo,
                      uint32_t rank_hi)
{
    static const char *const names[] = {"gemm", "allreduce"};
    static uint64_t seq;
    size_t n = last - first;
    struct rs_kernel_record *k = calloc(2 * n, sizeof *k);
    struct rs_collective_record *c = calloc(n, sizeof *c);
    struct rs_step_record *s = calloc(n, sizeof *s);
    struct rs_memcpy_record *lw = calloc(n, sizeof *lw);
    rs_store_write *w;
    bool dup;

    T_CHECK(k && c && s && lw);
    for (uint32_t r = rank_lo; k && c && s && lw && r < rank_hi; r++) {
        for (uint32_t i = first; i < last; i++) {
            enum t_fault fault = i >= onset ? job_fault : T_NO_FAULT;
            uint64_t t = (uint64_t)i * 1000 * T_US + 1000000 * T_US; /* steps of 1 ms */
            uint64_t gap = 10 * T_US, work = 250 * T_US, slowest;
            size_t x = i - first;
            if (fault == T_SLOW_GPU && r == bad_rank)
                work = work * 11 / 10;
            if (fault == T_LATE_HOST && r == bad_rank)
                gap = 110 * T_US;
            if (fault == T_SLOW_GPU)
                slowest = 10 * T_US + 250 * T_US * 11 / 10 * 2 + 10 * T_US;
            else if (fault == T_LATE_HOST)
                slowest = 110 * T_US + 2 * 250 * T_US + 10 * T_US;
            else
                slowest = 10 * T_US + 2 * 250 * T_US + 10 * T_US;
            uint64_t k0 = t + gap, k1 = k0 + work, k2 = k1 + work;
            k[2 * x] = (struct rs_kernel_record){k0, k1, 0, 7, 0, 0};
            k[2 * x + 1] = (struct rs_kernel_record){k1, k2, 0, 7, 0, 0};
            c[x] = (struct rs_collective_record){
                k2, t + slowest + 50 * T_US, 8, 1, i, RS_COLL_ALLREDUCE, 1, 17, false};
            s[x] = (struct rs_step_record){.step = i, .start_ns = t, .end_ns = t + 900 * T_US};
            uint64_t wait = fault == T_LATE_HOST && r == bad_rank ? 100 * T_US : 5 * T_US;
            lw[x] = (struct rs_memcpy_record){k0 - wait, k0, 0, RS_LAUNCH_WAIT, 7};
        }
        struct rs_rank_batch rb = {.identity = {job, r, r, T_STRAGGLER_RANKS, "node", "GPU-x", 1},
                                   T_RECORDS(strings, names, 2),
                                   T_RECORDS(kernels, k, 2 * n),
                                   T_RECORDS(collectives, c, n),
                                   T_RECORDS(steps, s, n),
                                   T_RECORDS(memcpys, lw, job_fault == T_LATE_HOST ? n : 0)};
        struct rs_agent_batch b = t_agent_batch(1, ++seq, &rb, 1);
        T_EQ(rs_store_write_begin(st, &w), 0);
        T_EQ(rs_store_write_batch(w, &b, &dup), 0);
        T_EQ(rs_store_write_commit(w), 0);
    }
    free(k);
    free(c);
    free(s);
    free(lw);
}

/* Commits steps first .. last - 1 of every rank (t_straggler_put_ranks). */
static inline void
t_straggler_put(rs_store *st, const char *job, enum t_fault job_fault, uint32_t bad_rank,
                uint32_t onset, uint32_t first, uint32_t last)
{
    t_straggler_put_ranks(st, job, job_fault, bad_rank, onset, first, last, 0, T_STRAGGLER_RANKS);
}

#endif
