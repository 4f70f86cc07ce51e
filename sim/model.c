/* Lockstep multi-rank step simulation (see model.h). */
#include "sim/model.h"

#include "sim/profile.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BUCKETS 16

struct rank_state {
    uint64_t rng;
    double speed;     /* this GPU's persistent speed factor (tiny, as between real GPUs) */
    uint64_t free_ns; /* when the rank can start its next step (during phase 2: when its NCCL
                         stream is free) */
    uint64_t nccl_seq;
    uint64_t arrive_ns[MAX_BUCKETS];
    uint64_t compute_end_ns;
    uint64_t step_start_ns;
    size_t resume_op; /* template index after SIM_WAIT_COMM */
};

struct sim_model {
    struct sim_params p;
    double scale; /* template -> requested step time */
    uint64_t rng;
    struct rank_state *ranks;
    sim_stalls *stalls; /* NULL: no PC sampling */
};

static uint64_t
next_u64(uint64_t *s)
{
    /* splitmix64: small, fast, good enough for noise */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double
gaussian(uint64_t *s)
{
    double u1 = ((double)(next_u64(s) >> 11) + 1.0) / 9007199254740993.0;
    double u2 = (double)(next_u64(s) >> 11) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static double
jitter(uint64_t *s, double sigma)
{
    return sigma > 0 ? exp(sigma * gaussian(s)) : 1.0;
}

int
sim_model_new(const struct sim_params *p, uint64_t start_ns, sim_model **out)
{
    sim_model *m = calloc(1, sizeof *m);

    if (!m || !(m->ranks = calloc(p->ranks, sizeof *m->ranks))) {
        free(m);
        return -ENOMEM;
    }
    m->p = *p;
    m->scale = p->step_ms > 0 ? p->step_ms * 1000.0 / rs_sim_profile_step_us() : 1.0;
    m->rng = p->seed ^ 0x5eed;
    for (uint32_t r = 0; r < p->ranks; r++) {
        struct rank_state *rs = &m->ranks[r];
        rs->rng = p->seed * 1000003u + r + 1;
        rs->speed = jitter(&rs->rng, p->noise / 4);
        rs->free_ns = start_ns;
    }
    *out = m;
    return 0;
}

uint64_t
sim_model_next_seq(const sim_model *m, uint32_t rank)
{
    return m->ranks[rank].nccl_seq;
}

void
sim_model_free(sim_model *m)
{
    if (!m)
        return;
    sim_stalls_free(m->stalls);
    free(m->ranks);
    free(m);
}

static uint64_t
dur_ns(double us)
{
    return us > 0 ? (uint64_t)(us * 1000.0) : 0;
}

/* Runs template ops [from, to) of one rank on its compute stream starting at *t. */
static bool
fault_active(const struct sim_params *p, uint64_t step)
{
    return step >= p->onset_step && (p->recover_step == 0 || step < p->recover_step);
}

static void
run_ops(sim_model *m, uint32_t r, uint64_t step, size_t from, size_t to, uint64_t *t,
        const struct sim_sink *sink, int *bucket)
{
    struct rank_state *rs = &m->ranks[r];
    const struct sim_params *p = &m->p;
    double factor = rs->speed * m->scale, fault = 1.0;

    if ((int64_t)r == p->slow_rank && fault_active(p, step))
        fault = 1.0 + p->slowdown;
    double gap_us = p->launch_gap_us > 0 ? p->launch_gap_us : RS_SIM_LAUNCH_GAP_US;
    factor *= fault;
    for (size_t i = from; i < to; i++) {
        const struct sim_op *op = &rs_sim_step_ops[i];
        uint64_t start = *t + dur_ns(gap_us * jitter(&rs->rng, p->noise * 10));
        uint64_t end = start + dur_ns(op->us * factor * jitter(&rs->rng, p->noise));

        switch (op->kind) {
        case SIM_KERNEL: {
            uint32_t n = p->kernel_split > 1 ? p->kernel_split : 1;
            for (uint32_t j = 0; j < n; j++) { /* the same time, cut into n launches */
                struct rs_kernel_record k = {start + (end - start) * j / n,
                                             start + (end - start) * (j + 1) / n,
                                             0,
                                             RS_SIM_COMPUTE_STREAM,
                                             0,
                                             0};
                sink->kernel(sink->arg, r, op->name, &k);
            }
            if (m->stalls) {
                double us = (double)(end - start) / 1e3;
                sim_stalls_add(m->stalls, r, i, us, us * (1.0 - 1.0 / fault));
            }
            *t = end;
            break;
        }
        case SIM_MEMCPY:
        case SIM_MEMSET: {
            struct rs_memcpy_record c = {start, end, op->bytes,
                                         op->kind == SIM_MEMSET ? RS_COPY_MEMSET : RS_COPY_DTOD,
                                         RS_SIM_COMPUTE_STREAM};
            sink->memcpy(sink->arg, r, &c);
            *t = end;
            break;
        }
        case SIM_ALLREDUCE:
            if (*bucket < MAX_BUCKETS)
                rs->arrive_ns[(*bucket)++] = *t;
            break;
        case SIM_WAIT_COMM:
            rs->resume_op = i + 1;
            return;
        }
    }
}

uint64_t
sim_model_step(sim_model *m, uint64_t step, const struct sim_sink *sink)
{
    const struct sim_params *p = &m->p;
    uint64_t slowest = 0, comm_end = 0;
    int buckets = 0;

    /* Phase 1: each rank's forward and backward compute, until its optimizer waits. */
    for (uint32_t r = 0; r < p->ranks; r++) {
        struct rank_state *rs = &m->ranks[r];
        uint64_t t = rs->free_ns;
        int b = 0;
        /* The step (its marker) begins when the last one ended; the host then needs a moment —
         * or, with a host stall, much longer (input pipeline, CPU) — before the first kernel. */
        rs->step_start_ns = t;
        t += dur_ns(RS_SIM_HOST_GAP_US * jitter(&rs->rng, p->noise * 10));
        if ((int64_t)r == p->stall_rank && fault_active(p, step)) {
            /* as a .item() on the last loss would: a short wait for the idle GPU */
            struct rs_memcpy_record sync = {t, t + dur_ns(RS_SIM_SYNC_US), 0, RS_SYNC_STREAM,
                                            RS_SIM_COMPUTE_STREAM};
            sink->memcpy(sink->arg, r, &sync);
            t += dur_ns(p->stall_ms * 1000.0);
        }
        rs->resume_op = rs_sim_step_n_ops;
        run_ops(m, r, step, 0, rs_sim_step_n_ops, &t, sink, &b);
        rs->compute_end_ns = t;
        for (int k = 0; p->buckets_after && k < b; k++)
            rs->arrive_ns[k] = t;
        buckets = b;
    }
    /* Phase 2: each AllReduce bucket completes once its last rank has arrived. */
    for (uint32_t r = 0; r < p->ranks; r++)
        m->ranks[r].free_ns = 0; /* reused below as "NCCL stream free at" */
    for (int b = 0; b < buckets; b++) {
        uint64_t last_start = 0;
        const struct sim_op *op = NULL;
        for (size_t i = 0, seen = 0; i < rs_sim_step_n_ops; i++)
            if (rs_sim_step_ops[i].kind == SIM_ALLREDUCE && (int)seen++ == b)
                op = &rs_sim_step_ops[i];
        for (uint32_t r = 0; r < p->ranks; r++) {
            struct rank_state *rs = &m->ranks[r];
            uint64_t start = rs->arrive_ns[b] > rs->free_ns ? rs->arrive_ns[b] : rs->free_ns;
            rs->arrive_ns[b] = start;
            if (start > last_start)
                last_start = start;
        }
        comm_end = last_start + dur_ns(op->us * m->scale * jitter(&m->rng, p->noise * 2));
        for (uint32_t r = 0; r < p->ranks; r++) {
            struct rank_state *rs = &m->ranks[r];
            struct rs_collective_record c = {
                rs->arrive_ns[b],  comm_end, op->bytes,          p->comm_hash,  rs->nccl_seq++,
                RS_COLL_ALLREDUCE, 0,        RS_SIM_NCCL_STREAM, p->nccl_plugin};
            sink->collective(sink->arg, r, p->nccl_plugin ? "AllReduce RING/LL" : op->name, &c);
            rs->free_ns = comm_end;
        }
    }
    /* Phase 3: the optimizer runs after both its compute and every AllReduce finished. */
    for (uint32_t r = 0; r < p->ranks; r++) {
        struct rank_state *rs = &m->ranks[r];
        uint64_t t = rs->compute_end_ns > comm_end ? rs->compute_end_ns : comm_end;
        int b = buckets;
        run_ops(m, r, step, rs->resume_op, rs_sim_step_n_ops, &t, sink, &b);
        struct rs_step_record s = {.step = step, .start_ns = rs->step_start_ns, .end_ns = t};
        sink->step(sink->arg, r, &s);
        rs->free_ns = t;
        if (t > slowest)
            slowest = t;
    }
    return slowest;
}

int
sim_model_enable_stalls(sim_model *m)
{
    return m->stalls ? 0 : sim_stalls_new(m->p.ranks, &m->stalls);
}

void
sim_model_emit_stalls(sim_model *m, uint32_t rank, sim_stall_emit emit, void *arg)
{
    if (m->stalls)
        sim_stalls_emit(m->stalls, rank, emit, arg);
}
