/* Unit tests of the agent windows' block layout (keys.h rs_key_awin): a rank's window scans return
 * exactly its windows of the range, whatever the blocks in between hold — other ranks, other jobs,
 * nothing at all — windows of several parts included (a brute-force comparison over random
 * windows and ranges). */
#include "common/error.h"
#include "storage/keys.h"
#include "storage/store.h"
#include "tests/store_fixture.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S 1000000000ull
#define T0 (1700000000ull * S)
#define NAMES 300 /* one window names them all: several parts */
#define RANKS 4
#define WINDOWS 120 /* per rank and job */

static const char *names[NAMES];

struct window {
    uint64_t start, len, count; /* count: launches of names[0] */
};

/* A rank's windows: starts on a 1 s grid in bursts with long gaps between (blocks no rank
 * uses), lengths 1, 5 or 7 s, no two with the same start. */
static void
make_windows(struct window *w, unsigned *seed)
{
    uint64_t t = T0 + (rand_r(seed) % 10) * S;
    for (size_t i = 0; i < WINDOWS; i++) {
        static const uint64_t lens[] = {1, 5, 7};
        w[i].len = lens[rand_r(seed) % 3] * S;
        w[i].count = 1 + rand_r(seed) % 1000;
        w[i].start = t;
        t += (1 + rand_r(seed) % 3) * S;
        if (rand_r(seed) % 20 == 0)
            t += (50 + rand_r(seed) % 400) * S; /* a gap of many blocks */
    }
}

static void
put_windows(rs_store *st, const char *job, uint32_t rank, const struct window *w)
{
    struct rs_kernel_total *kt = calloc(WINDOWS + NAMES, sizeof *kt);
    size_t n = 0;

    for (size_t i = 0; i < WINDOWS; i++)
        kt[n++] =
            (struct rs_kernel_total){w[i].start, w[i].len, 0, w[i].count, w[i].count * 10, 10};
    for (uint32_t j = 1; j < NAMES; j++) /* the 10th window: every name */
        kt[n++] = (struct rs_kernel_total){w[10].start, w[10].len, j, 1, 1000 + j, 1000 + j};
    struct rs_rank_batch rb = {
        .identity = T_IDENTITY(job, rank, RANKS, "GPU-1"),
        .clock = {w[WINDOWS - 1].start + 10 * S, w[WINDOWS - 1].start + 10 * S},
        T_RECORDS(strings, names, NAMES),
        .kernel_totals = kt,
        .n_kernel_totals = (uint32_t)n};
    t_store_put(st, &rb, 1);
    free(kt);
}

struct got {
    uint64_t count, windows, others; /* names[0]'s launches and windows; other names' entries */
    uint64_t last_start;
    bool in_order;
};

static int
on_window(void *arg, const struct rs_kernel_window *kw, const char *name, uint64_t hash)
{
    struct got *g = arg;

    (void)hash;
    if (strcmp(name, names[0]) != 0) {
        g->others++;
        return 0;
    }
    g->in_order &= kw->start_ns >= g->last_start;
    g->last_start = kw->start_ns;
    g->count += kw->count;
    g->windows++;
    return 0;
}

static void
scans_match_brute_force(void)
{
    char dir[] = "/tmp/rs-awin-XXXXXX";
    static struct window w[2][RANKS][WINDOWS];
    static const char *const jobs[2] = {"job-a", "job-b"};
    unsigned seed = 7;
    rs_store *st = t_store_open(dir, NULL);
    rs_store_read *r;

    for (int j = 0; j < 2; j++)
        for (uint32_t k = 0; k < RANKS; k++) {
            make_windows(w[j][k], &seed);
            put_windows(st, jobs[j], k, w[j][k]);
        }
    T_EQ(rs_store_read_begin(st, &r), 0);
    uint64_t span = w[0][0][WINDOWS - 1].start - T0 + 20 * S;
    for (int q = 0; q < 400; q++) {
        int j = rand_r(&seed) % 2;
        uint32_t k = (uint32_t)(rand_r(&seed) % RANKS);
        uint64_t t0 = T0 - 5 * S + (uint64_t)rand_r(&seed) % (span / 1000000) * 1000000;
        uint64_t t1 = t0 + (uint64_t)(rand_r(&seed) % 4 == 0 ? span : rand_r(&seed) % (60 * S));
        static const uint64_t lookbacks[] = {0, 3 * S, 6 * S, 3600 * S}; /* the last: past the
                                                                         longest window (7 s) */
        uint64_t lookback = lookbacks[rand_r(&seed) % 4];
        struct got all = {0, 0, 0, 0, true}, over = {0, 0, 0, 0, true};
        uint64_t count = 0, windows = 0, over_count = 0, over_windows = 0, others = 0;
        for (size_t i = 0; i < WINDOWS; i++) {
            const struct window *x = &w[j][k][i];
            if (x->start >= t0 && x->start < t1) {
                count += x->count;
                windows++;
                others += i == 10 ? NAMES - 1 : 0;
            }
            if (x->start + lookback >= t0 && x->start < t1 && x->start + x->len > t0) {
                over_count += x->count;
                over_windows++;
            }
        }
        T_EQ(rs_store_kernel_windows_scan(r, jobs[j], k, t0, t1, on_window, &all), 0);
        T_EQ(rs_store_kernel_windows_overlapping(r, jobs[j], k, t0, t1, lookback, on_window, &over),
             0);
        T_EQ(all.count, count);
        T_EQ(all.windows, windows);
        T_EQ(all.others, others);
        T_CHECK(all.in_order);
        T_EQ(over.count, over_count);
        T_EQ(over.windows, over_windows);
    }
    /* a rank, and a job, with no windows */
    struct got none = {0, 0, 0, 0, true};
    T_EQ(rs_store_kernel_windows_scan(r, "job-a", RANKS, 0, UINT64_MAX, on_window, &none), 0);
    T_EQ(rs_store_kernel_windows_scan(r, "job-c", 0, 0, UINT64_MAX, on_window, &none), 0);
    T_EQ(none.windows + none.others, 0);
    rs_store_read_end(r);
    struct rs_store_check_report rep;
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.problems, 0);
    t_store_remove(st, dir);
}

int
main(void)
{
    static char name_buf[NAMES][16];

    for (int i = 0; i < NAMES; i++) {
        snprintf(name_buf[i], sizeof name_buf[i], "kernel_%d", i);
        names[i] = name_buf[i];
    }
    T_RUN(scans_match_brute_force);
    return T_DONE("storage/awin");
}
