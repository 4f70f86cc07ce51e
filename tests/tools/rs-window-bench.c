/* Benchmark tool: the cost of reading agent windows back (docs/storage.md "Why agent windows by
 * block"). Writes RANKS ranks x SECONDS of 1 s agent windows (60 kernel names each, 5 windows per
 * rank and batch, the ranks of 8-rank nodes in one transaction, as agents with --flush-ms 5000
 * --summary-window-s 1 send them) into a fresh store through the storage API, then times, best
 * and median of RUNS:
 *   overlap: the windows of 17 ranks that overlap the last 30 s, looking back up to an hour for
 *            long windows — what a straggler's cause reads (query/stragglers.c: the straggler
 *            and 16 peers, one verdict window);
 *   range:   every window of one rank over the whole job.
 * usage: rs-window-bench DIR RANKS SECONDS RUNS */
#include "common/clock.h"
#include "query/stats.h"
#include "storage/store.h"
#include "tests/t_batch.h"

#include <stdio.h>
#include <stdlib.h>

#define NAMES 60
#define PER_BATCH 5 /* windows per rank and batch */
#define NODE 8      /* ranks per agent */
#define S 1000000000ull
#define T0 (1700000000ull * S)

static int
generate(rs_store *st, const char *const *names, uint32_t ranks, uint64_t seconds)
{
    struct rs_kernel_total kt[PER_BATCH * NAMES];
    struct rs_rank_batch rb[NODE];
    uint64_t seq = 0;
    int rc = 0;

    for (uint64_t s0 = 0; s0 < seconds && rc == 0; s0 += PER_BATCH) {
        uint32_t n = 0;
        for (uint64_t k = 0; k < PER_BATCH && s0 + k < seconds; k++)
            for (uint32_t j = 0; j < NAMES; j++)
                kt[n++] = (struct rs_kernel_total){T0 + (s0 + k) * S, S, j, 10, 10000 + j, 2000};
        uint64_t sent = T0 + (s0 + PER_BATCH) * S;
        for (uint32_t node = 0; node * NODE < ranks && rc == 0; node++) {
            rs_store_write *w;
            bool dup;
            uint32_t m = 0;
            for (uint32_t r = node * NODE; r < ranks && m < NODE; r++, m++)
                rb[m] = (struct rs_rank_batch){
                    .identity = T_IDENTITY_OF("bench", r, m, ranks, "h", "GPU-1", 1),
                    .clock = {sent, sent},
                    T_RECORDS(strings, names, NAMES),
                    .kernel_totals = kt,
                    .n_kernel_totals = n};
            struct rs_agent_batch b = {.agent_id = 1000 + node,
                                       .boot_id = 1,
                                       .batch_seq = ++seq,
                                       .hello = {.agent_id = 1000 + node,
                                                 .boot_id = 1,
                                                 .host = "h",
                                                 .agent_version = "bench",
                                                 .clock = {0, 0}},
                                       .ranks = rb,
                                       .n_ranks = m,
                                       .agent_dropped = 0};
            if ((rc = rs_store_write_begin(st, &w)) != 0)
                break;
            if ((rc = rs_store_write_batch(w, &b, &dup)) != 0) {
                rs_store_write_abort(w);
                break;
            }
            rc = rs_store_write_commit(w);
        }
    }
    return rc;
}

static int
count(void *arg, const struct rs_kernel_window *kw, const char *name, uint64_t hash)
{
    (void)kw, (void)name, (void)hash;
    ++*(uint64_t *)arg;
    return 0;
}

/* Times RUNS rounds of `what` (0: overlap, 1: range) into ms[]; *entries gets one round's. */
static int
time_scans(rs_store *st, uint32_t ranks, uint64_t seconds, int what, int runs, double *ms,
           uint64_t *entries)
{
    uint64_t end = T0 + seconds * S;
    int rc = 0;

    for (int i = 0; i < runs && rc == 0; i++) {
        rs_store_read *r;
        uint64_t n = 0, t = rs_clock_mono_ns();
        if ((rc = rs_store_read_begin(st, &r)) != 0)
            break;
        for (uint32_t k = 0; k < (what == 0 ? 17u : 1u) && k < ranks && rc == 0; k++)
            rc = what == 0 ? rs_store_kernel_windows_overlapping(r, "bench", k, end - 30 * S, end,
                                                                 3600 * S, count, &n)
                           : rs_store_kernel_windows_scan(r, "bench", k, 0, UINT64_MAX, count, &n);
        rs_store_read_end(r);
        ms[i] = (double)(rs_clock_mono_ns() - t) / 1e6;
        *entries = n;
    }
    return rc;
}

int
main(int argc, char **argv)
{
    static char buf[NAMES][48];
    const char *names[NAMES];
    rs_store *st = NULL;

    if (argc != 5) {
        fprintf(stderr, "usage: rs-window-bench DIR RANKS SECONDS RUNS\n");
        return 2;
    }
    uint32_t ranks = (uint32_t)strtoul(argv[2], NULL, 10);
    uint64_t seconds = strtoull(argv[3], NULL, 10);
    int runs = atoi(argv[4]);
    if (ranks == 0 || seconds < 30 || runs < 1) {
        fprintf(stderr, "rs-window-bench: RANKS >= 1, SECONDS >= 30, RUNS >= 1\n");
        return 2;
    }
    for (int i = 0; i < NAMES; i++) {
        snprintf(buf[i], sizeof buf[i], "void bench_kernel_%02d<float, 128, 4>(float*)", i);
        names[i] = buf[i];
    }
    int rc = rs_store_open(argv[1], NULL, &st);
    double *ms = calloc((size_t)runs, sizeof *ms);
    uint64_t t = rs_clock_mono_ns(), entries = 0;
    if (rc == 0 && ms && (rc = generate(st, names, ranks, seconds)) == 0)
        printf("wrote %u ranks x %llu s of 1 s windows (%d names) in %.1f s\n", ranks,
               (unsigned long long)seconds, NAMES, (double)(rs_clock_mono_ns() - t) / 1e9);
    for (int what = 0; what < 2 && rc == 0; what++) {
        if ((rc = time_scans(st, ranks, seconds, what, runs, ms, &entries)) != 0)
            break;
        double median = rs_quantile(ms, (size_t)runs, 0.5); /* (sorts ms: best first) */
        printf("%s: best %.2f ms, median %.2f ms over %d runs (%llu window entries)\n",
               what == 0 ? "overlap (17 ranks, last 30 s, 1 h lookback)"
                         : "range (1 rank, the whole job)",
               ms[0], median, runs, (unsigned long long)entries);
    }
    if (rc != 0)
        fprintf(stderr, "rs-window-bench: error %d\n", rc);
    free(ms);
    if (st)
        rs_store_close(st);
    return rc == 0 ? 0 : 1;
}
