/* Synthetic PC-sampling stall counts (see stalls.h). */
#include "sim/stalls.h"

#include "sim/profile.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLE_US 4.0 /* one sample per this much kernel time: a synthetic rate, not CUPTI's */
#define PREFIX "smsp__pcsamp_warps_issue_stalled_"

enum { SELECTED, MATH, LONG_SB, SHORT_SB, WAIT, BARRIER, LG_THROTTLE, NOT_SELECTED, N_REASONS };

static const char *const reason_names[N_REASONS] = {PREFIX "selected",
                                                    PREFIX "math_pipe_throttle",
                                                    PREFIX "long_scoreboard",
                                                    PREFIX "short_scoreboard",
                                                    PREFIX "wait",
                                                    PREFIX "barrier",
                                                    PREFIX "lg_throttle",
                                                    PREFIX "not_selected"};

/* Shares per reason, in percent, by kernel class. */
static const unsigned gemm_mix[N_REASONS] = {22, 34, 12, 6, 14, 8, 0, 4};
static const unsigned memory_mix[N_REASONS] = {14, 2, 52, 6, 8, 2, 12, 4};

struct sim_stalls {
    uint32_t ranks;
    double *samples; /* [rank][op][reason], fractional until emitted */
};

static bool
is_gemm(const char *name)
{
    return strstr(name, "gemm") != NULL;
}

int
sim_stalls_new(uint32_t ranks, sim_stalls **out)
{
    sim_stalls *s = calloc(1, sizeof *s);

    if (!s ||
        !(s->samples = calloc((size_t)ranks * rs_sim_step_n_ops * N_REASONS, sizeof *s->samples))) {
        free(s);
        return -ENOMEM;
    }
    s->ranks = ranks;
    *out = s;
    return 0;
}

void
sim_stalls_free(sim_stalls *s)
{
    if (!s)
        return;
    free(s->samples);
    free(s);
}

void
sim_stalls_add(sim_stalls *s, uint32_t rank, size_t op, double us, double fault_us)
{
    double *v = &s->samples[((size_t)rank * rs_sim_step_n_ops + op) * N_REASONS];
    const unsigned *mix = is_gemm(rs_sim_step_ops[op].name) ? gemm_mix : memory_mix;
    double healthy = (us - fault_us) / SAMPLE_US;

    for (int i = 0; i < N_REASONS; i++)
        v[i] += healthy * mix[i] / 100.0;
    v[LONG_SB] += fault_us / SAMPLE_US;
}

void
sim_stalls_emit(sim_stalls *s, uint32_t rank, sim_stall_emit emit, void *arg)
{
    for (size_t op = 0; op < rs_sim_step_n_ops; op++) {
        double *v = &s->samples[((size_t)rank * rs_sim_step_n_ops + op) * N_REASONS];
        for (int i = 0; i < N_REASONS; i++) {
            uint64_t n = (uint64_t)v[i];
            if (n == 0)
                continue;
            v[i] -= (double)n; /* the fraction carries over */
            /* one PC per (kernel, reason): its hottest instruction */
            emit(arg, rank, rs_sim_step_ops[op].name, reason_names[i], 0x80u + 0x40u * (unsigned)i,
                 n);
        }
    }
}
