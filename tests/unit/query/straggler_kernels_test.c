/* Unit tests of the straggler rule's kernel speed (query/straggler_kernels.c, stragglers_int.h):
 * the measure on hand-built kernel tables, and the rule on a hand-built 8-rank job whose slow GPU
 * the step metrics dilute — its kernels run 3.5% slower, its work measures 1.1% over its peers'
 * (within their spread), and it arrives last at every collective; and the scan of a rank's kernels,
 * whose durations it keeps bounded. */
#include "query/stragglers.h"
#include "query/stragglers_int.h"
#include "tests/store_fixture.h"
#include "tests/t.h"
#include "tests/t_batch.h"
#include "tests/t_noise.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RANKS 8
#define STEPS 90
#define NAMES 5
#define SLOW_RANK 3

/* A kernel table: `count` kernels of each name 0 .. names-1, of durations base x speed x the
 * name's factor x 1% noise per kernel, all as records (durations kept). */
static void
table(struct rs__knames *ns, uint32_t rank, size_t names, double count, double speed,
      const double *name_factor)
{
    ns->durations = true;
    for (size_t k = 0; k < names; k++) {
        struct rs__kname x = {1000 + k, strdup("k"), 0, 0, 0, 1, {NULL, 0, 0}};
        for (size_t i = 0; i < (size_t)count; i++) {
            double d = 1e6 * (1 + (double)k) * speed * (name_factor ? name_factor[k] : 1) *
                       (1 + 0.01 * t_noise(rank * 100003ull + k * 1009 + i));
            T_OK(rs_samples_add(&x.durs, d));
            x.count += 1;
            x.records += 1;
            x.ns += d;
        }
        T_CHECK(ns->n < ns->cap || (ns->v = realloc(ns->v, (ns->cap = ns->n + 8) * sizeof *ns->v)));
        ns->v[ns->n++] = x;
    }
}

static void
tables_fini(struct rs__knames *all, size_t n)
{
    for (size_t i = 0; i < n; i++)
        rs__knames_fini(&all[i]);
}

/* The measure: the median over names of the rank's duration over its peers' median. */
static void
measure(void)
{
    struct rs__knames all[RANKS] = {{0}};
    bool use[RANKS];
    struct rs__kernel_speed ks;
    /* the peers' last name runs under NCCL and is stretched 4% (interference); the slow rank's
     * hardly is: on that name it is not slower — the median over names does not mind */
    double peers_f[NAMES] = {1, 1, 1, 1, 1.04}, slow_f[NAMES] = {1, 1, 1, 1, 1.0};

    for (uint32_t r = 0; r < RANKS; r++) {
        use[r] = true;
        double gpu = 1 + 0.004 * t_noise(r); /* each GPU's own speed, ±0.4% */
        table(&all[r], r, NAMES, 30, r == SLOW_RANK ? 1.035 : gpu,
              r == SLOW_RANK ? slow_f : peers_f);
    }
    T_OK(rs__kernel_speed(all, use, RANKS, SLOW_RANK, 15, &ks));
    T_CHECK(ks.known && ks.names == NAMES);
    T_CHECK(fabs(ks.ratio - 1.035) < 0.006);
    T_CHECK(ks.se < 0.25 * 0.03);
    T_OK(rs__kernel_speed(all, use, RANKS, 0, 15, &ks)); /* a healthy one: within its spread */
    T_CHECK(ks.known && fabs(ks.ratio - 1) < 0.01);
    /* names run fewer times than asked are left out: none left, nothing known */
    T_OK(rs__kernel_speed(all, use, RANKS, SLOW_RANK, 31, &ks));
    T_CHECK(!ks.known && ks.names == 0);
    /* the peers used: only rank 0 — the ratio is against it alone */
    for (uint32_t r = 0; r < RANKS; r++)
        use[r] = r == 0 || r == SLOW_RANK;
    T_OK(rs__kernel_speed(all, use, RANKS, SLOW_RANK, 15, &ks));
    T_CHECK(ks.known && fabs(ks.ratio - 1.035 / (1 + 0.004 * t_noise(0))) < 0.006);
    tables_fini(all, RANKS);

    /* names that disagree (0.90 .. 1.20 over the peers: not one speed) have a large standard
     * error; a name only the rank runs (extra work, not speed) is not compared */
    double spread_f[NAMES + 1] = {0.90, 1.0, 1.05, 1.10, 1.20, 1.0};
    for (uint32_t r = 0; r < RANKS; r++) {
        use[r] = true;
        table(&all[r], r, r == SLOW_RANK ? NAMES + 1 : NAMES, 30, 1.0,
              r == SLOW_RANK ? spread_f : NULL);
    }
    all[SLOW_RANK].v[NAMES].hash = 5000; /* its own name (the table stays sorted) */
    T_OK(rs__kernel_speed(all, use, RANKS, SLOW_RANK, 15, &ks));
    T_CHECK(ks.known && ks.names == NAMES);
    T_CHECK(fabs(ks.ratio - 1.05) < 0.01);
    T_CHECK(ks.se > 0.25 * 0.03);
    tables_fini(all, RANKS);

    /* kernel windows hold totals only: the mean stands for the median */
    table(&all[0], 0, NAMES, 30, 1.0, NULL);
    table(&all[1], 1, NAMES, 30, 1.0, NULL);
    for (size_t k = 0; k < NAMES; k++) {
        all[1].v[k].count += 30; /* 30 more kernels from a window, 6% slower each */
        all[1].v[k].ns += 30 * 1e6 * (1 + (double)k) * 1.06;
    }
    use[0] = use[1] = true;
    T_OK(rs__kernel_speed(all, use, 2, 1, 15, &ks));
    T_CHECK(ks.known && fabs(ks.ratio - 1.03) < 0.006);
    tables_fini(all, 2);
}

/* The job: RANKS ranks, STEPS steps of 40 ms; per step NAMES kernels of 3 ms x the rank's kernel
 * speed, and step summaries whose work (compute + host gap) is 30 ms x the rank's work factor —
 * the slow rank's 1.011, the others' a constant per-GPU spread of ±0.8% (interference and host
 * gaps, which its kernels do not show) — 4 collectives per step, the `late` rank last at each. */
struct job {
    double kernel_speed; /* the slow rank's kernels over the others' */
    uint32_t late;       /* the last arriver at every collective; RANKS: round robin */
};

static double
work_factor(uint32_t r)
{
    return r == SLOW_RANK ? 1.011 : 1 + 0.008 * t_noise(r + 101);
}

static void
put_kernels(rs_store *st, const char *job, const struct job *j)
{
    static const char *const names[NAMES] = {"gemm_fwd", "gelu", "gemm_dgrad", "gemm_wgrad", "sgd"};
    struct rs_kernel_record *k = calloc(STEPS * NAMES, sizeof *k);

    T_CHECK(k != NULL);
    for (uint32_t r = 0; k && r < RANKS; r++) {
        double speed = r == SLOW_RANK ? j->kernel_speed : 1 + 0.004 * t_noise(r);
        for (uint32_t i = 0; i < STEPS; i++)
            for (uint32_t n = 0; n < NAMES; n++) {
                uint64_t t = i * 40000000ull + 1000000ull + n * 5000000ull;
                double d = 3e6 * speed * (1 + 0.01 * t_noise(r * 7919ull + i * 31 + n));
                k[i * NAMES + n] = (struct rs_kernel_record){t, t + (uint64_t)d, n, 7, 0, 0};
            }
        struct rs_rank_batch rb = {.identity = T_IDENTITY(job, r, RANKS, "GPU"),
                                   T_RECORDS(strings, names, NAMES),
                                   T_RECORDS(kernels, k, STEPS * NAMES)};
        t_store_put(st, &rb, 1);
    }
    free(k);
}

static struct rs_rank_steps *
job_steps(const struct job *j)
{
    struct rs_rank_steps *rk = calloc(RANKS, sizeof *rk);
    for (uint32_t r = 0; rk && r < RANKS; r++) {
        rk[r] = (struct rs_rank_steps){.rank = r, .n = STEPS};
        T_CHECK((rk[r].steps = calloc(STEPS, sizeof *rk[r].steps)) != NULL);
        for (uint32_t i = 0; rk[r].steps && i < STEPS; i++) {
            uint32_t late = j->late < RANKS ? j->late : (i * 5 + 1) % RANKS;
            double f = work_factor(r) * (1 + 0.002 * t_noise(1000003ull * i + r));
            rk[r].steps[i] =
                (struct rs_step_summary){.step = i,
                                         .start_ns = i * 40000000ull,
                                         .end_ns = i * 40000000ull + 39000000ull,
                                         .step_ns = 39000000ull,
                                         .compute_ns = (uint64_t)(29e6 * f),
                                         .host_gap_ns = 1000000ull,
                                         .comm_ns = 4000000ull,
                                         .instances = 4,
                                         .last_arrivals = r == late ? 4 : 0,
                                         .peer_wait_ns = r == late ? 4 * 300000ull : 0};
        }
    }
    return rk;
}

static void
evaluate(const struct job *j, struct rs_straggler_report *rep)
{
    char dir[] = "/tmp/rs-straggler-kernels-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    struct rs_rank_steps *rk = job_steps(j);
    rs_store_read *r;

    put_kernels(st, "kspeed", j);
    *rep = (struct rs_straggler_report){0};
    T_OK(rs_store_read_begin(st, &r));
    T_OK(rs_stragglers_evaluate(r, "kspeed", NULL, rk, RANKS, rep));
    rs_store_read_end(r);
    for (uint32_t i = 0; rk && i < RANKS; i++)
        free(rk[i].steps);
    free(rk);
    t_store_remove(st, dir);
}

/* The rule: the diluted slow GPU is named on its kernels (kernel_ratio, cause gpu_slow); the same
 * steps with kernels as fast as the peers' — what the rule saw before the kernel speed — name
 * nobody; kernels 3.5% slower without arrival evidence name nobody; kernels 2% slower (below the
 * threshold) name nobody. */
static void
diluted_gpu(void)
{
    struct rs_straggler_report rep;
    struct job j = {1.035, SLOW_RANK};

    evaluate(&j, &rep);
    T_EQ(rep.n_verdicts, 1);
    if (rep.n_verdicts == 1) {
        const struct rs_straggler_verdict *v = &rep.verdicts[0];
        T_EQ(v->rank, SLOW_RANK);
        T_CHECK(v->slowdown < 1.02); /* its work: diluted */
        T_CHECK(fabs(v->kernel_ratio - 1.035) < 0.006);
        T_EQ(v->cause, RS_STRAGGLER_CAUSE_GPU_SLOW);
        T_CHECK(v->confidence > 0.3 && v->confidence <= 1);
        json_t *doc = rs_straggler_report_json(&rep);
        json_t *first = json_array_get(json_object_get(doc, "stragglers"), 0);
        T_CHECK(json_is_real(json_object_get(first, "kernel_ratio")));
        json_decref(doc);
    }
    rs_straggler_report_fini(&rep);

    j.kernel_speed = 1.0;
    evaluate(&j, &rep);
    T_EQ(rep.n_verdicts, 0);
    rs_straggler_report_fini(&rep);

    j.kernel_speed = 1.035;
    j.late = RANKS;
    evaluate(&j, &rep);
    T_EQ(rep.n_verdicts, 0);
    rs_straggler_report_fini(&rep);

    j.kernel_speed = 1.02;
    j.late = SLOW_RANK;
    evaluate(&j, &rep);
    T_EQ(rep.n_verdicts, 0);
    rs_straggler_report_fini(&rep);
}

/* The scan of a rank's kernels: 10,000 records of one name in the range, each 0.1 µs longer than
 * the one before (1.0 – 2.0 ms), and 10 after it — count and records of those inside, and at most
 * RS__KNAME_DURATIONS durations kept, spread evenly over them: their median is the records'
 * (1.49995 ms; the first 4,096 alone would give 1.2 ms). */
static void
scan_bounded(void)
{
    static const char *const names[] = {"gemm"};
    char dir[] = "/tmp/rs-straggler-kernels-scan-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    enum { N = 10000, OUTSIDE = 10 };
    struct rs_kernel_record *k = calloc(N + OUTSIDE, sizeof *k);
    rs_store_read *r;

    T_CHECK(k != NULL);
    for (uint32_t i = 0; k && i < N + OUTSIDE; i++) {
        uint64_t t = 1000000000ull + i * 3000000ull, d = 1000000ull + i * 100ull;
        k[i] = (struct rs_kernel_record){t, t + d, 0, 7, 0, 0};
    }
    struct rs_rank_batch rb = {.identity = T_IDENTITY("scan", 0, 1, "GPU"),
                               T_RECORDS(strings, names, 1),
                               T_RECORDS(kernels, k, N + OUTSIDE)};
    t_store_put(st, &rb, 1);
    struct rs__knames ns = {.t0 = 1000000000ull,
                            .t1 = 1000000000ull + N * 3000000ull,
                            .last_ns = UINT64_MAX,
                            .durations = true};
    T_OK(rs_store_read_begin(st, &r));
    T_OK(rs__knames_scan(r, "scan", 0, &ns));
    rs_store_read_end(r);
    T_EQ(ns.n, 1);
    if (ns.n == 1) {
        T_CHECK(ns.v[0].count == N && ns.v[0].records == N);
        T_CHECK(ns.v[0].durs.n > 0 && ns.v[0].durs.n <= RS__KNAME_DURATIONS);
        T_CHECK(fabs(rs_median(ns.v[0].durs.v, ns.v[0].durs.n) - 1499950.0) < 5000);
        T_CHECK(strcmp(ns.v[0].name, "gemm") == 0);
    }
    rs__knames_fini(&ns);
    free(k);
    t_store_remove(st, dir);
}

int
main(void)
{
    T_RUN(measure);
    T_RUN(scan_bounded);
    T_RUN(diluted_gpu);
    return T_DONE("query/straggler_kernels");
}
