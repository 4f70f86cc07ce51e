/* Unit tests of step inference from the kernel-name period, on hand-built sequences whose answer
 * is known by construction: a training-like step (repeated layers, a loss, an optimizer, an idle
 * gap before the next step's first kernel), the window starting mid-step (phase), kernels
 * inserted, dropped and renamed at random (noise), a per-layer repetition that must not be taken
 * for the step, and sequences with no period. */
#include "query/kernel_period.h"
#include "tests/t.h"

#include <stdlib.h>

#define US 1000ull

struct gen {
    struct rs_kernel_record *k;
    size_t n, cap;
    uint64_t t;
    uint32_t noise_pct; /* chance per kernel of an inserted, dropped or renamed kernel */
};

static void
emit(struct gen *g, uint32_t name, uint64_t dur, uint64_t gap)
{
    g->t += gap;
    if (g->noise_pct && (uint32_t)(rand() % 100) < g->noise_pct) {
        switch (rand() % 3) {
        case 0: /* an extra kernel before this one */
            if (g->n < g->cap)
                g->k[g->n++] = (struct rs_kernel_record){
                    g->t, g->t + 3 * US, 900 + (uint32_t)(rand() % 50), 7, 0, 0};
            g->t += 4 * US;
            break;
        case 1: /* this one dropped */
            return;
        default: /* this one renamed */
            name = 950 + (uint32_t)(rand() % 50);
        }
    }
    if (g->n < g->cap)
        g->k[g->n++] = (struct rs_kernel_record){g->t, g->t + dur, name, 7, 0, 0};
    g->t += dur;
}

/* One step: `idle` µs of GPU idle, then per layer a GEMM (1), an activation (2); a loss (3, 4);
 * the backward per layer GEMMs (5, 6) and an activation gradient (7); the optimizer (8, 9). */
static void
step(struct gen *g, unsigned layers, uint64_t idle_us)
{
    emit(g, 1, 200 * US, idle_us * US);
    emit(g, 2, 30 * US, 2 * US);
    for (unsigned l = 1; l < layers; l++) {
        emit(g, 1, 200 * US, 2 * US);
        emit(g, 2, 30 * US, 2 * US);
    }
    emit(g, 3, 10 * US, 2 * US);
    emit(g, 4, 5 * US, 2 * US);
    for (unsigned l = 0; l < layers; l++) {
        emit(g, 7, 30 * US, 2 * US);
        emit(g, 5, 200 * US, 2 * US);
        emit(g, 6, 200 * US, 2 * US);
    }
    emit(g, 8, 50 * US, 2 * US);
    emit(g, 9, 20 * US, 2 * US);
}

/* kernels per step of step() */
static size_t
per_step(unsigned layers)
{
    return 2 * layers + 2 + 3 * layers + 2;
}

static void
exact(void)
{
    static struct rs_kernel_record k[40 * 64];
    struct gen g = {k, 0, sizeof k / sizeof k[0], 1000000000ull, 0};
    struct rs_step_record *s;
    struct rs_kernel_period p;
    size_t ns;

    for (int i = 0; i < 30; i++)
        step(&g, 6, 500);
    T_OK(rs_kernel_period_steps(k, g.n, &s, &ns, &p));
    T_EQ(p.kernels_per_step, per_step(6));
    /* from each step's first GEMM to the next one's, counted where the GPU idle before the
     * start is seen: not the first step (its idle precedes the window) nor the last (no end) */
    T_EQ(ns, 28);
    /* a step: 6*230 + 15 + 6*430 + 70 µs of kernels, 2 µs gaps, 500 µs idle at its start */
    uint64_t want = (6 * 230 + 15 + 6 * 430 + 70) * US + (per_step(6) - 1) * 2 * US + 500 * US;
    T_EQ(p.step_ns, want);
    for (size_t i = 0; i < ns; i++) {
        T_EQ(s[i].step, i + 1);
        T_EQ(s[i].end_ns - s[i].start_ns, want);
    }
    /* a step starts when the GPU finished the previous one: its idle is at its start */
    T_EQ(ns ? s[0].start_ns : 0, k[per_step(6) - 1].end_ns);
    T_EQ(ns ? s[0].end_ns : 0, k[2 * per_step(6) - 1].end_ns);
    free(s);
}

/* The window begins mid-step: period and count are the same. */
static void
phase(void)
{
    static struct rs_kernel_record k[40 * 64];
    struct gen g = {k, 0, sizeof k / sizeof k[0], 1000000000ull, 0};
    struct rs_step_record *s;
    struct rs_kernel_period p;
    size_t ns;

    for (int i = 0; i < 31; i++)
        step(&g, 4, 300);
    for (size_t cut = 1; cut < per_step(4); cut += 3) {
        T_OK(rs_kernel_period_steps(k + cut, g.n - cut, &s, &ns, &p));
        T_EQ(p.kernels_per_step, per_step(4));
        T_EQ(ns, 29);
        free(s);
    }
}

/* 1% of the kernels inserted, dropped or renamed; durations as before. */
static void
noise(void)
{
    static struct rs_kernel_record k[60 * 64];
    struct gen g = {k, 0, sizeof k / sizeof k[0], 1000000000ull, 1};
    struct rs_step_record *s;
    struct rs_kernel_period p;
    size_t ns;

    srand(7);
    for (int i = 0; i < 50; i++)
        step(&g, 5, 400);
    T_OK(rs_kernel_period_steps(k, g.n, &s, &ns, &p));
    T_EQ(p.kernels_per_step, per_step(5));
    /* a step whose anchor was dropped or renamed merges with the next: a few fewer steps */
    T_CHECK(ns >= 44 && ns <= 48);
    uint64_t want = (5 * 230 + 15 + 5 * 430 + 70) * US + (per_step(5) - 1) * 2 * US + 400 * US;
    T_CHECK(p.step_ns > want * 95 / 100 && p.step_ns < want * 105 / 100);
    free(s);
}

/* Steps without an idle gap: still found (the anchor is then any once-per-step kernel). */
static void
no_gap(void)
{
    static struct rs_kernel_record k[40 * 64];
    struct gen g = {k, 0, sizeof k / sizeof k[0], 1000000000ull, 0};
    struct rs_step_record *s;
    struct rs_kernel_period p;
    size_t ns;

    for (int i = 0; i < 20; i++)
        step(&g, 8, 2);
    T_OK(rs_kernel_period_steps(k, g.n, &s, &ns, &p));
    T_EQ(p.kernels_per_step, per_step(8));
    T_CHECK(ns == 18 || ns == 19); /* with no idle to place it, the phase is any kernel's */
    free(s);
}

/* Random names: no period; too few kernels: none either. */
static void
no_period(void)
{
    static struct rs_kernel_record k[3000];
    struct rs_step_record *s;
    struct rs_kernel_period p;
    size_t ns;
    uint64_t t = 0;

    srand(11);
    for (size_t i = 0; i < 3000; i++) {
        t += (uint64_t)(rand() % 20 + 1) * US;
        k[i] = (struct rs_kernel_record){t, t + 10 * US, (uint32_t)(rand() % 40), 7, 0, 0};
        t += 10 * US;
    }
    T_OK(rs_kernel_period_steps(k, 3000, &s, &ns, &p));
    T_EQ(ns, 0);
    T_EQ(p.kernels_per_step, 0);
    T_CHECK(s == NULL);
    T_OK(rs_kernel_period_steps(k, 4, &s, &ns, &p));
    T_EQ(ns, 0);
    T_OK(rs_kernel_period_steps(k, 0, &s, &ns, &p));
    T_EQ(ns, 0);
}

int
main(void)
{
    T_RUN(exact);
    T_RUN(phase);
    T_RUN(noise);
    T_RUN(no_gap);
    T_RUN(no_period);
    return T_DONE("kernel_period");
}
