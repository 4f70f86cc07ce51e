/* Unit tests of storing an agent's summaries: kernel and copy totals merge into their windows
 * (totals of the same window from several batches add up), count in the rank's totals, and
 * measured steps keep their metrics; the store stays consistent. */
#include "common/error.h"
#include "storage/keys.h"
#include "storage/store.h"
#include "storage/store_int.h"
#include "tests/store_fixture.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S 1000000000ull
#define T0 (1700000000ull * S) /* a multiple of 5 s */

static const char *const names[] = {"gemm", "relu"};

static void
put(rs_store *st, const struct rs_kernel_total *kt, uint32_t n_kt, const struct rs_copy_total *ct,
    uint32_t n_ct, const struct rs_step_record *steps, uint32_t n_steps)
{
    struct rs_rank_batch rb = {.identity = T_IDENTITY("job", 0, 1, "GPU-1"),
                               .clock = {T0 + 60 * S, T0 + 60 * S},
                               T_RECORDS(strings, names, 2),
                               T_RECORDS(steps, steps, n_steps),
                               .kernel_totals = kt,
                               .n_kernel_totals = n_kt,
                               .copy_totals = ct,
                               .n_copy_totals = n_ct};
    t_store_put(st, &rb, 1);
}

struct seen {
    uint64_t count[2], ns[2], max[2], windows;
    uint64_t copies, copy_bytes;
};

static int
on_window(void *arg, const struct rs_kernel_window *kw, const char *name, uint64_t name_hash)
{
    struct seen *s = arg;
    int i = strcmp(name, "gemm") == 0 ? 0 : 1;

    (void)name_hash;
    T_EQ(kw->window_ns, 5 * S);
    s->count[i] += kw->count;
    s->ns[i] += kw->total_ns;
    s->max[i] = kw->max_ns > s->max[i] ? kw->max_ns : s->max[i];
    s->windows++;
    return 0;
}

static int
on_copy_window(void *arg, const struct rs_copy_window *cw)
{
    struct seen *s = arg;
    s->copies += cw->count;
    s->copy_bytes += cw->bytes;
    return 0;
}

static int
on_step(void *arg, const struct rs_step_record *sr)
{
    struct rs_step_record *out = arg;
    out[sr->step] = *sr;
    return 0;
}

static void
totals_and_measured_steps(void)
{
    char dir[] = "/tmp/rs-sumtest-XXXXXX";
    struct rs_store_check_report rep;
    struct seen seen;
    rs_store *st;
    rs_store_read *r;

    memset(&seen, 0, sizeof seen);
    st = t_store_open(dir, NULL);
    const struct rs_kernel_total a[] = {{T0, 5 * S, 0, 10, 1000, 300},
                                        {T0, 5 * S, 1, 4, 80, 20},
                                        {T0 + 5 * S, 5 * S, 0, 2, 500, 260}};
    const struct rs_kernel_total late[] = {{T0, 5 * S, 0, 1, 400, 400}}; /* into the first */
    const struct rs_copy_total c[] = {{T0, 5 * S, RS_COPY_HTOD, 3, 30, 12, 3 * 4096}};
    const struct rs_step_record steps[] = {
        {.step = 1,
         .start_ns = T0,
         .end_ns = T0 + S,
         .measured = true,
         .metrics = {600000000, 300000000, 100000000, 300000000, 2000, 14}},
        {.step = 2, .start_ns = T0 + S, .end_ns = T0 + 2 * S}};
    put(st, a, 3, c, 1, steps, 2);
    put(st, late, 1, NULL, 0, NULL, 0);

    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_store_kernel_windows_scan(r, "job", 0, 0, UINT64_MAX, on_window, &seen), 0);
    T_EQ(rs_store_copy_windows_scan(r, "job", 0, 0, UINT64_MAX, on_copy_window, &seen), 0);
    T_EQ(seen.count[0], 13);
    T_EQ(seen.ns[0], 1900);
    T_EQ(seen.max[0], 400);
    T_EQ(seen.count[1], 4);
    T_EQ(seen.windows, 3); /* gemm and relu in the first window (merged), gemm in the second */
    T_EQ(seen.copies, 3);
    T_EQ(seen.copy_bytes, 3 * 4096);
    /* overlapping [T0 + 5 s + 1, T0 + 6 s): the window that starts at T0 ends at T0 + 5 s and is
     * left out; the one from T0 + 5 s is in, though it starts before the range */
    struct seen overlap;
    memset(&overlap, 0, sizeof overlap);
    T_EQ(rs_store_kernel_windows_overlapping(r, "job", 0, T0 + 5 * S + 1, T0 + 6 * S, 3600 * S,
                                             on_window, &overlap),
         0);
    T_EQ(overlap.windows, 1);
    T_EQ(overlap.count[0], 2);
    T_EQ(overlap.count[1], 0);
    memset(&overlap, 0, sizeof overlap); /* and a window that starts in the range counts too */
    T_EQ(rs_store_kernel_windows_overlapping(r, "job", 0, T0 + 4 * S, T0 + 6 * S, 3600 * S,
                                             on_window, &overlap),
         0);
    T_EQ(overlap.windows, 3);
    struct rs_step_record got[3];
    memset(got, 0, sizeof got);
    T_EQ(rs_store_steps_scan(r, "job", 0, 0, on_step, got), 0);
    T_CHECK(got[1].measured && got[1].metrics.compute_ns == 600000000 &&
            got[1].metrics.kernels == 14 && got[1].metrics.host_gap_ns == 2000);
    T_CHECK(!got[2].measured && got[2].end_ns == T0 + 2 * S);
    struct rs_rank_info *ranks = NULL;
    size_t n = 0;
    T_EQ(rs_store_ranks_get(r, "job", &ranks, &n), 0);
    T_CHECK(n == 1 && ranks[0].n_kernels == 17 && ranks[0].kernel_ns == 1980 &&
            ranks[0].n_memcpys == 3 && ranks[0].memcpy_ns == 30 && ranks[0].first_ns == T0 &&
            ranks[0].last_ns == T0 + 10 * S);
    free(ranks);
    rs_store_read_end(r);
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.problems, 0);
    t_store_remove(st, dir);
}

/* kwin values: version 1 (fixed entries, older stores) still reads; packed values decode exactly;
 * truncated or padded ones are corrupt. */
struct collected {
    struct rs__kwin_entry e[4];
    int n;
};

static int
collect(void *arg, const struct rs__kwin_entry *e)
{
    struct collected *c = arg;
    if (c->n < 4)
        c->e[c->n++] = *e;
    return 0;
}

/* A stand-in for kwin_names: number k names hash 0x1000 + k, numbers up to 9 exist. */
static int
fake_hash_of(void *arg, uint32_t number, uint64_t *hash)
{
    (void)arg;
    if (number > 9)
        return RS_E_CORRUPT;
    *hash = 0x1000 + number;
    return 0;
}

static void
kwin_value_versions(void)
{
    uint8_t buf[256];
    struct collected got = {.n = 0};
    uint64_t window_ns = 0;
    const struct rs__kwin_keys names_by_number = {fake_hash_of, NULL}, *keys = &names_by_number;

    struct rs_kwin_header h1 = {1, 2, 60 * S};
    struct rs_kwin_entry e1[2] = {{0x1234, 5000, 0, 7, 900}, {0x99, 100, 0, 1, 100}};
    memcpy(buf, &h1, sizeof h1);
    memcpy(buf + sizeof h1, e1, sizeof e1);
    T_EQ(rs__kwin_value_decode(keys, RS_KWIN_AGENT_KERNEL, buf, sizeof h1 + sizeof e1, &window_ns,
                               collect, &got),
         0);
    T_EQ(window_ns, 60 * S);
    T_CHECK(got.n == 2 && got.e[0].key == 0x1234 && got.e[0].count == 7 &&
            got.e[0].total_ns == 5000 && got.e[0].max_ns == 900 && got.e[1].count == 1);
    T_EQ(rs__kwin_value_decode(keys, RS_KWIN_AGENT_KERNEL, buf, sizeof h1 + sizeof e1 - 1,
                               &window_ns, collect, &got),
         RS_E_CORRUPT);

    /* packed: key, then varints count 3, total 300 (2 bytes), max 200 (2 bytes), bytes 0 */
    struct rs_kwin_header h2 = {RS_KWIN_VERSION_PACKED, 1, 5 * S};
    uint64_t key = 0xabcdef;
    const uint8_t rest[] = {3, 0xac, 0x02, 0xc8, 0x01, 0};
    size_t len = 0;
    memcpy(buf, &h2, sizeof h2);
    len += sizeof h2;
    memcpy(buf + len, &key, 8);
    len += 8;
    memcpy(buf + len, rest, sizeof rest);
    len += sizeof rest;
    got.n = 0;
    T_EQ(rs__kwin_value_decode(keys, RS_KWIN_AGENT_KERNEL, buf, len, &window_ns, collect, &got), 0);
    T_CHECK(got.n == 1 && got.e[0].key == 0xabcdef && got.e[0].count == 3 &&
            got.e[0].total_ns == 300 && got.e[0].max_ns == 200 && got.e[0].bytes == 0);
    T_EQ(window_ns, 5 * S);
    T_EQ(rs__kwin_value_decode(keys, RS_KWIN_AGENT_KERNEL, buf, len - 1, &window_ns, collect, &got),
         RS_E_CORRUPT);
    buf[len] = 0;
    T_EQ(rs__kwin_value_decode(keys, RS_KWIN_AGENT_KERNEL, buf, len + 1, &window_ns, collect, &got),
         RS_E_CORRUPT);
    h2.version = 7;
    memcpy(buf, &h2, sizeof h2);
    T_EQ(rs__kwin_value_decode(keys, RS_KWIN_AGENT_KERNEL, buf, len, &window_ns, collect, &got),
         RS_E_CORRUPT);

    /* numbered: varints number 5, count 3, total 300, max 200, bytes 0 — the number resolves
     * into its hash for kernel kinds, stays as it is for copy kinds */
    struct rs_kwin_header h3 = {RS_KWIN_VERSION_NUMBERED, 1, 5 * S};
    const uint8_t entry[] = {5, 3, 0xac, 0x02, 0xc8, 0x01, 0};
    memcpy(buf, &h3, sizeof h3);
    memcpy(buf + sizeof h3, entry, sizeof entry);
    len = sizeof h3 + sizeof entry;
    got.n = 0;
    T_EQ(rs__kwin_value_decode(keys, RS_KWIN_AGENT_KERNEL, buf, len, &window_ns, collect, &got), 0);
    T_CHECK(got.n == 1 && got.e[0].key == 0x1005 && got.e[0].count == 3 &&
            got.e[0].total_ns == 300 && got.e[0].max_ns == 200);
    got.n = 0;
    T_EQ(rs__kwin_value_decode(keys, RS_KWIN_AGENT_MEMCPY, buf, len, &window_ns, collect, &got), 0);
    T_CHECK(got.n == 1 && got.e[0].key == 5);
    T_EQ(rs__kwin_value_decode(keys, RS_KWIN_AGENT_KERNEL, buf, len - 1, &window_ns, collect, &got),
         RS_E_CORRUPT);
    buf[sizeof h3] = 42; /* a number kwin_names does not hold */
    T_EQ(rs__kwin_value_decode(keys, RS_KWIN_AGENT_KERNEL, buf, len, &window_ns, collect, &got),
         RS_E_CORRUPT);
}

/* A name whose put was aborted is not taken as stored: the next batch writes it. */
static int
on_name(void *arg, const struct rs_kernel_window *kw, const char *name, uint64_t name_hash)
{
    (void)kw;
    (void)name_hash;
    *(int *)arg += strcmp(name, "gemm") == 0;
    return 0;
}

static void
aborted_names_are_written_again(void)
{
    char dir[] = "/tmp/rs-sumtest-XXXXXX";
    rs_store *st;
    rs_store_write *w;
    rs_store_read *r;
    bool dup;
    int gemm = 0;

    st = t_store_open(dir, NULL);
    const struct rs_kernel_total kt = {T0, 5 * S, 0, 1, 10, 10};
    struct rs_rank_batch rb = {.identity = T_IDENTITY("job", 0, 1, "GPU-1"),
                               .clock = {T0, T0},
                               T_RECORDS(strings, names, 1),
                               .kernel_totals = &kt,
                               .n_kernel_totals = 1};
    struct rs_agent_batch b = t_agent_batch(2, 1, &rb, 1);
    T_EQ(rs_store_write_begin(st, &w), 0);
    T_EQ(rs_store_write_batch(w, &b, &dup), 0);
    rs_store_write_abort(w);
    T_EQ(rs_store_write_begin(st, &w), 0);
    T_EQ(rs_store_write_batch(w, &b, &dup), 0);
    T_EQ(rs_store_write_commit(w), 0);
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_store_kernel_windows_scan(r, "job", 0, 0, UINT64_MAX, on_name, &gemm), 0);
    T_EQ(gemm, 1); /* resolved, not "?" */
    rs_store_read_end(r);
    t_store_remove(st, dir);
}

/* Kernel names by number: numbers an aborted transaction gave are given again (to other names),
 * committed ones survive a reopen, and every window reads back its own names. */
struct names_seen {
    int gemm, relu, softmax, other;
};

static int
count_names(void *arg, const struct rs_kernel_window *kw, const char *name, uint64_t name_hash)
{
    struct names_seen *n = arg;
    (void)kw;
    (void)name_hash;
    if (strcmp(name, "gemm") == 0)
        n->gemm++;
    else if (strcmp(name, "relu") == 0)
        n->relu++;
    else if (strcmp(name, "softmax") == 0)
        n->softmax++;
    else
        n->other++;
    return 0;
}

static void
put_names(rs_store *st, const char *const *batch_names, uint32_t n_names, uint64_t start,
          bool commit)
{
    struct rs_kernel_total kt[3];
    for (uint32_t i = 0; i < n_names; i++)
        kt[i] = (struct rs_kernel_total){start, 5 * S, i, 1, 10, 10};
    struct rs_rank_batch rb = {.identity = T_IDENTITY("job", 0, 1, "GPU-1"),
                               .clock = {start, start},
                               T_RECORDS(strings, batch_names, n_names),
                               .kernel_totals = kt,
                               .n_kernel_totals = n_names};
    static uint64_t seq = 100;
    struct rs_agent_batch b = t_agent_batch(3, seq++, &rb, 1);
    rs_store_write *w;
    bool dup;
    T_EQ(rs_store_write_begin(st, &w), 0);
    T_EQ(rs_store_write_batch(w, &b, &dup), 0);
    if (commit)
        T_EQ(rs_store_write_commit(w), 0);
    else
        rs_store_write_abort(w);
}

static void
names_by_number(void)
{
    char dir[] = "/tmp/rs-sumtest-XXXXXX";
    static const char *const first[] = {"relu", "softmax"}, *const second[] = {"gemm", "relu"},
                             *const third[] = {"softmax", "gemm", "relu"};
    struct rs_store_check_report rep;
    struct names_seen seen = {0};
    rs_store_read *r;
    rs_store *st = t_store_open(dir, NULL);

    put_names(st, first, 2, T0, false); /* numbers 0, 1 given, then forgotten */
    put_names(st, second, 2, T0, true); /* gemm 0, relu 1 */
    rs_store_close(st);
    struct rs_store_options o = {0};
    T_EQ(rs_store_open(dir, &o, &st), 0);
    put_names(st, third, 3, T0 + 5 * S, true); /* softmax 2 */
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_store_kernel_windows_scan(r, "job", 0, 0, UINT64_MAX, count_names, &seen), 0);
    rs_store_read_end(r);
    T_EQ(seen.gemm, 2);
    T_EQ(seen.relu, 2);
    T_EQ(seen.softmax, 1);
    T_EQ(seen.other, 0);
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.name_numbers, 3); /* dense: the aborted ones were given again */
    T_EQ(rep.problems, 0);
    t_store_remove(st, dir);
}

int
main(void)
{
    T_RUN(totals_and_measured_steps);
    T_RUN(names_by_number);
    T_RUN(kwin_value_versions);
    T_RUN(aborted_names_are_written_again);
    return T_DONE("storage/summary_ingest");
}
