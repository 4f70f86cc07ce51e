/* Unit tests of kernel rollups: totals per kernel name over raw records + windows are the same
 * before and after, however small the transactions; only records older than the horizon go; late
 * records merge into their window; windows with many names take several parts; the store stays
 * consistent; deleting the job deletes its windows; agents' windows are coarsened the same way. */
#include "common/clock.h"
#include "common/error.h"
#include "storage/keys.h"
#include "storage/store.h"
#include "tests/store_fixture.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <errno.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S 1000000000ull
#define T0 (1700000040ull * S) /* a multiple of 60 s */
#define NAMES 400

static const char *names[NAMES];
static uint64_t seq;

/* One batch of rank `rank`: n kernels from t on, 1 ms apart, named names[i % n_names], lasting
 * 1 + i % 7 us; and 2 copies, at +0.5 ms (HtoD, 4 KiB, 2 us) and +1.5 ms (memset, 64 B, 1 us). */
static void
put(rs_store *st, uint32_t rank, uint64_t t, uint32_t n, uint32_t n_names)
{
    struct rs_kernel_record *k = calloc(n, sizeof *k);

    for (uint32_t i = 0; i < n; i++)
        k[i] = (struct rs_kernel_record){
            t + i * 1000000ull, t + i * 1000000ull + (1 + i % 7) * 1000, i % n_names, 7, 0, 0};
    struct rs_memcpy_record m[2] = {{t + 500000, t + 502000, 4096, RS_COPY_HTOD, 7},
                                    {t + 1500000, t + 1501000, 64, RS_COPY_MEMSET, 7}};
    struct rs_rank_batch rb = {.identity = T_IDENTITY("job", rank, 2, "GPU-1"),
                               .clock = {t, t},
                               T_RECORDS(strings, names, NAMES),
                               T_RECORDS(kernels, k, n),
                               T_RECORDS(memcpys, m, 2)};
    t_store_put(st, &rb, 1);
    free(k);
}

/* Per-name totals of one rank: raw records and windows, and what each holds. */
struct totals {
    uint64_t count[NAMES], ns[NAMES], max[NAMES];
    uint64_t raw, windows, raw_before; /* raw records; window entries; raw records before t */
    uint64_t copies[RS_COPY_KIND_COUNT], copy_ns[RS_COPY_KIND_COUNT],
        copy_bytes[RS_COPY_KIND_COUNT];
    uint64_t raw_copies;
    uint64_t horizon;
};

static int
name_index(const char *name)
{
    for (int i = 0; i < NAMES; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

static int
on_raw(void *arg, const struct rs_kernel_record *k, const char *name, uint64_t name_hash)
{
    struct totals *t = arg;
    int i = name_index(name);

    (void)name_hash;
    T_CHECK(i >= 0);
    if (i < 0)
        return -1;
    t->count[i]++;
    t->ns[i] += k->end_ns - k->start_ns;
    if (k->end_ns - k->start_ns > t->max[i])
        t->max[i] = k->end_ns - k->start_ns;
    t->raw++;
    t->raw_before += k->start_ns < t->horizon;
    return 0;
}

static int
on_window(void *arg, const struct rs_kernel_window *kw, const char *name, uint64_t name_hash)
{
    struct totals *t = arg;
    int i = name_index(name);

    (void)name_hash;
    T_CHECK(i >= 0 && kw->start_ns % (60 * S) == 0 && kw->window_ns == 60 * S);
    if (i < 0)
        return -1;
    t->count[i] += kw->count;
    t->ns[i] += kw->total_ns;
    if (kw->max_ns > t->max[i])
        t->max[i] = kw->max_ns;
    t->windows++;
    return 0;
}

static int
on_raw_copy(void *arg, const struct rs_memcpy_record *m)
{
    struct totals *t = arg;

    T_CHECK(m->kind < RS_COPY_KIND_COUNT);
    t->copies[m->kind % RS_COPY_KIND_COUNT]++;
    t->copy_ns[m->kind % RS_COPY_KIND_COUNT] += m->end_ns - m->start_ns;
    t->copy_bytes[m->kind % RS_COPY_KIND_COUNT] += m->bytes;
    t->raw_copies++;
    return 0;
}

static int
on_copy_window(void *arg, const struct rs_copy_window *cw)
{
    struct totals *t = arg;

    T_CHECK(cw->kind < RS_COPY_KIND_COUNT && cw->window_ns == 60 * S);
    t->copies[cw->kind % RS_COPY_KIND_COUNT] += cw->count;
    t->copy_ns[cw->kind % RS_COPY_KIND_COUNT] += cw->total_ns;
    t->copy_bytes[cw->kind % RS_COPY_KIND_COUNT] += cw->bytes;
    return 0;
}

static struct totals
totals(rs_store *st, uint32_t rank, uint64_t horizon)
{
    struct totals t;
    rs_store_read *r;

    memset(&t, 0, sizeof t);
    t.horizon = horizon;
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_store_kernels_scan(r, "job", rank, 0, UINT64_MAX, on_raw, &t), 0);
    T_EQ(rs_store_kernel_windows_scan(r, "job", rank, 0, UINT64_MAX, on_window, &t), 0);
    T_EQ(rs_store_memcpys_scan(r, "job", rank, 0, UINT64_MAX, on_raw_copy, &t), 0);
    T_EQ(rs_store_copy_windows_scan(r, "job", rank, 0, UINT64_MAX, on_copy_window, &t), 0);
    rs_store_read_end(r);
    return t;
}

/* Rolls up with a clock of `now` and `raw` seconds kept raw, in transactions of at most `per_txn`
 * records. */
static struct rs_store_rollup
rollup(rs_store *st, uint64_t now, uint64_t raw_s, size_t per_txn)
{
    return t_store_rollup(st, now, raw_s * S, 60 * S, per_txn);
}

static bool
same_totals(const struct totals *a, const struct totals *b)
{
    return memcmp(a->count, b->count, sizeof a->count) == 0 &&
           memcmp(a->ns, b->ns, sizeof a->ns) == 0 && memcmp(a->max, b->max, sizeof a->max) == 0 &&
           memcmp(a->copies, b->copies, sizeof a->copies) == 0 &&
           memcmp(a->copy_ns, b->copy_ns, sizeof a->copy_ns) == 0 &&
           memcmp(a->copy_bytes, b->copy_bytes, sizeof a->copy_bytes) == 0;
}

static void
rollup_keeps_totals(rs_store *st)
{
    uint64_t now = rs_clock_realtime_ns(), horizon = T0 + 120 * S;
    /* rank 0: 4 batches over 3.5 minutes, 3 names; rank 1: one batch, 2 names */
    for (int i = 0; i < 4; i++)
        put(st, 0, T0 + (uint64_t)i * 70 * S, 500, 3);
    put(st, 1, T0 + 5 * S, 300, 2);
    struct totals b0 = totals(st, 0, horizon), b1 = totals(st, 1, horizon);
    T_EQ(b0.raw, 2000);
    T_EQ(b0.windows, 0);

    /* 90 s stay raw: rank 0's horizon is its last record (T0 + 210.5 s) - 90 s = T0 + 120.5 s;
     * rank 1 has nothing that old */
    struct rs_store_rollup ru = rollup(st, now, 90, 37);
    T_EQ(ru.records, 1000 + 2 * 2); /* and their copies */
    struct totals a0 = totals(st, 0, horizon), a1 = totals(st, 1, horizon);
    T_CHECK(same_totals(&b0, &a0));
    T_CHECK(same_totals(&b1, &a1));
    T_EQ(a0.raw, 1000);     /* the batches at +140 s and +210 s */
    T_EQ(a0.raw_before, 0); /* nothing older than the horizon is left raw */
    T_EQ(a0.raw_copies, 2 * 2);
    T_EQ(a0.copy_bytes[RS_COPY_HTOD], 4 * 4096);
    T_EQ(a0.windows, 3 * 2); /* [T0, +60 s) and [+60 s, +120 s), 3 names each */
    T_EQ(a1.raw, 300);
    T_EQ(a1.windows, 0);

    /* again: nothing left to do */
    ru = rollup(st, now, 90, 1000);
    T_EQ(ru.records, 0);

    /* a late batch into an old window merges with it */
    put(st, 0, T0 + 20 * S, 99, 3);
    struct totals late = totals(st, 0, horizon);
    ru = rollup(st, now, 90, 1000);
    T_EQ(ru.records, 99 + 2);
    struct totals merged = totals(st, 0, horizon);
    T_CHECK(same_totals(&late, &merged));
    T_EQ(merged.windows, 3 * 2);

    /* a job that received nothing for 90 s: everything is rolled up */
    ru = rollup(st, now + 1000 * S, 90, 1000);
    T_EQ(ru.records, 1000 + 300 + 3 * 2);
    a0 = totals(st, 0, horizon);
    a1 = totals(st, 1, horizon);
    T_CHECK(same_totals(&merged, &a0));
    T_CHECK(same_totals(&b1, &a1));
    T_EQ(a0.raw + a1.raw + a0.raw_copies + a1.raw_copies, 0);

    struct rs_store_check_report rep;
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.kernel_windows, 2 * (4 + 1)); /* rank 0: 4 windows, rank 1: 1; kernels and copies */
}

static void
many_names_take_parts(rs_store *st)
{
    struct rs_store_check_report before, after;
    uint64_t t = T0 + 600 * S; /* 1,000 kernels of 400 names within one window */

    T_EQ(rs_store_check(st, &before), 0);
    put(st, 0, t, 1000, NAMES);
    struct totals b = totals(st, 0, UINT64_MAX);
    rollup(st, rs_clock_realtime_ns() + 1000 * S, 90, 250);
    struct totals a = totals(st, 0, UINT64_MAX);
    T_CHECK(same_totals(&b, &a));
    T_EQ(a.raw, 0);
    T_EQ(rs_store_check(st, &after), 0);
    /* one more window, in 2 parts (400 numbered entries > 1,900 bytes), and its copies */
    T_EQ(after.kernel_windows, before.kernel_windows + 2 + 1);
}

/* Rank `rank`: 500 kernels from t, 1 ms apart, in 5 steps of 100 ms, with a stored summary for
 * the steps whose bit is set in `summarized`. */
static void
put_steps(rs_store *st, uint32_t rank, uint64_t t, unsigned summarized)
{
    struct rs_step_record steps[5];
    struct rs_step_summary sum[5];
    uint32_t n_sum = 0;
    rs_store_write *w;
    bool dup;

    put(st, rank, t, 500, 3);
    for (uint32_t i = 0; i < 5; i++) {
        steps[i] = (struct rs_step_record){
            .step = i, .start_ns = t + i * 100000000ull, .end_ns = t + (i + 1) * 100000000ull};
        if (summarized & (1u << i))
            sum[n_sum++] = (struct rs_step_summary){
                .step = i, .start_ns = steps[i].start_ns, .end_ns = steps[i].end_ns};
    }
    struct rs_rank_batch rb = {.identity = T_IDENTITY("job", rank, 8, "GPU-1"),
                               .clock = {t, t},
                               T_RECORDS(steps, steps, 5)};
    struct rs_agent_batch b = t_agent_batch(1, ++seq, &rb, 1);
    T_EQ(rs_store_write_begin(st, &w), 0);
    T_EQ(rs_store_write_batch(w, &b, &dup), 0);
    T_EQ(rs_store_step_summaries_put(w, "job", rank, sum, n_sum), 0);
    T_EQ(rs_store_write_commit(w), 0);
}

/* Records of steps without a stored summary stay raw, even in an idle job — the last ones, and
 * one in the middle (a gap the evaluator never filled); a chunk straddling the horizon is split. */
static void
unsummarized_steps_stay_raw(rs_store *st)
{
    uint64_t t = T0 + 1200 * S - 300000000ull, t4 = T0 + 1800 * S;

    put_steps(st, 3, t, 0x0f);  /* steps 0-3 summarized, 4 not */
    put_steps(st, 4, t4, 0x1b); /* steps 0, 1, 3, 4: step 2 not */
    struct totals b3 = totals(st, 3, t + 400000000ull), b4 = totals(st, 4, t4 + 200000000ull);

    struct rs_store_rollup ru = rollup(st, rs_clock_realtime_ns() + 1000 * S, 90, 1000);
    T_EQ(ru.records, 400 + 2 + 200 + 2); /* and each rank's copies at +0.5 ms and +1.5 ms */
    struct totals a3 = totals(st, 3, t + 400000000ull), a4 = totals(st, 4, t4 + 200000000ull);
    T_CHECK(same_totals(&b3, &a3));
    T_CHECK(same_totals(&b4, &a4));
    T_EQ(a3.raw, 100); /* step 4 */
    T_EQ(a3.raw_before, 0);
    T_EQ(a4.raw, 300); /* steps 2 to 4: the gap stops the rollup */
    T_EQ(a4.raw_before, 0);
    /* where the evaluator starts catching up after a restart: the oldest step still raw */
    rs_store_read *r;
    uint64_t step = 0;
    bool found = false;
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_store_oldest_raw_step(r, "job", 4, &step, &found), 0);
    T_CHECK(found && step == 2);
    T_EQ(rs_store_oldest_raw_step(r, "job", 3, &step, &found), 0);
    T_CHECK(found && step == 4);
    T_EQ(rs_store_oldest_raw_step(r, "job", 0, &step, &found), 0); /* no steps */
    T_CHECK(!found);
    rs_store_read_end(r);
    struct rs_store_check_report rep;
    T_EQ(rs_store_check(st, &rep), 0);
}

static void
refusals_and_delete(rs_store *st)
{
    struct rs_store_rollup ru;
    rs_store_write *w;
    rs_store_read *r;
    bool done;

    memset(&ru, 0, sizeof ru);
    ru.now_ns = rs_clock_realtime_ns();
    T_EQ(rs_store_write_begin(st, &w), 0);
    T_EQ(rs_store_rollup_step(w, &ru, 10, &done), -EINVAL);
    T_EQ(rs_store_write_commit(w), 0);

    T_CHECK(t_store_delete_job(st, "job", 1000) > 0);
    struct rs_store_check_report rep;
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.kernel_windows, 0);
    T_EQ(rs_store_read_begin(st, &r), 0);
    struct totals t;
    memset(&t, 0, sizeof t);
    T_EQ(rs_store_kernel_windows_scan(r, "job", 0, 0, UINT64_MAX, on_window, &t), 0);
    T_EQ(t.windows, 0);
    rs_store_read_end(r);
}

/* Agent windows (`--summarize`): one batch of rank 0 of job "sum" with windows [from, to) of
 * `len` seconds from T0 + from_s: names[0] twice (2,000 + w ns in all, longest 1,500), names[1]
 * once (700 ns) and one HtoD copy (4 KiB) per window. */
static void
put_agent_windows(rs_store *st, uint64_t from_s, uint32_t n, uint64_t len_s)
{
    struct rs_kernel_total kt[64];
    struct rs_copy_total ct[32];

    T_CHECK(n <= 32);
    for (uint32_t i = 0; i < n && i < 32; i++) {
        uint64_t start = T0 + (from_s + i * len_s) * S;
        kt[2 * i] = (struct rs_kernel_total){start, len_s * S, 0, 2, 2000 + i, 1500};
        kt[2 * i + 1] = (struct rs_kernel_total){start, len_s * S, 1, 1, 700, 700};
        ct[i] = (struct rs_copy_total){start, len_s * S, RS_COPY_HTOD, 1, 900, 900, 4096};
    }
    uint64_t end = T0 + (from_s + n * len_s) * S;
    struct rs_rank_batch rb = {.identity = T_IDENTITY("sum", 0, 1, "GPU-1"),
                               .clock = {end, end},
                               T_RECORDS(strings, names, NAMES),
                               .kernel_totals = kt,
                               .n_kernel_totals = 2 * n,
                               .copy_totals = ct,
                               .n_copy_totals = n};
    t_store_put(st, &rb, 1);
}

/* What the window scans return for job "sum": totals per name and copies, windows by length. */
struct agent_totals {
    uint64_t count[2], ns[2], max[2], copies, copy_bytes;
    uint64_t windows_5s, windows_60s, windows_90s, first_90s;
};

static int
on_agent_window(void *arg, const struct rs_kernel_window *kw, const char *name, uint64_t hash)
{
    struct agent_totals *t = arg;
    int i = name_index(name);

    (void)hash;
    T_CHECK(i == 0 || i == 1);
    if (i != 0 && i != 1)
        return -1;
    t->count[i] += kw->count;
    t->ns[i] += kw->total_ns;
    t->max[i] = kw->max_ns > t->max[i] ? kw->max_ns : t->max[i];
    t->windows_5s += i == 0 && kw->window_ns == 5 * S;
    t->windows_60s += i == 0 && kw->window_ns == 60 * S;
    if (i == 0 && kw->window_ns == 90 * S && t->windows_90s++ == 0)
        t->first_90s = kw->start_ns;
    return 0;
}

static int
on_agent_copy(void *arg, const struct rs_copy_window *cw)
{
    struct agent_totals *t = arg;
    t->copies += cw->count;
    t->copy_bytes += cw->bytes;
    return 0;
}

static struct agent_totals
agent_totals(rs_store *st)
{
    struct agent_totals t;
    rs_store_read *r;

    memset(&t, 0, sizeof t);
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_store_kernel_windows_scan(r, "sum", 0, 0, UINT64_MAX, on_agent_window, &t), 0);
    T_EQ(rs_store_copy_windows_scan(r, "sum", 0, 0, UINT64_MAX, on_agent_copy, &t), 0);
    rs_store_read_end(r);
    return t;
}

static bool
same_agent_totals(const struct agent_totals *a, const struct agent_totals *b)
{
    return memcmp(a->count, b->count, sizeof a->count) == 0 &&
           memcmp(a->ns, b->ns, sizeof a->ns) == 0 && memcmp(a->max, b->max, sizeof a->max) == 0 &&
           a->copies == b->copies && a->copy_bytes == b->copy_bytes;
}

/* Agent windows past the horizon are coarsened into rollup windows, in transactions of a few
 * entries, and the totals stay the same; newer ones stay as sent; a window longer than the rollup
 * window keeps its length; an idle job's windows all go. */
static void
agent_windows_coarsen(rs_store *st)
{
    struct rs_store_check_report rep;

    put_agent_windows(st, 0, 12, 5);   /* [T0, T0 + 60 s) */
    put_agent_windows(st, 60, 12, 5);  /* [T0 + 60 s, T0 + 120 s) */
    put_agent_windows(st, 240, 1, 90); /* [T0 + 240 s, T0 + 330 s): the rank's last data */
    struct agent_totals before = agent_totals(st);
    T_EQ(before.windows_5s, 24);
    T_EQ(before.count[0], 50);

    /* horizon: T0 + 330 s - 90 s = T0 + 240 s, so the 5 s windows go and the 90 s one stays */
    struct rs_store_rollup ru = rollup(st, rs_clock_realtime_ns(), 90, 5);
    struct agent_totals mid = agent_totals(st);
    T_CHECK(same_agent_totals(&before, &mid));
    T_EQ(ru.agent_windows, 48); /* 24 kernel windows, 24 copy windows */
    T_EQ(mid.windows_5s, 0);
    T_EQ(mid.windows_60s, 2);
    T_EQ(mid.windows_90s, 1);
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.problems, 0);

    /* idle: everything goes; the 90 s window keeps its length in its rollup window */
    ru = rollup(st, rs_clock_realtime_ns() + 1000 * S, 90, 5);
    struct agent_totals after = agent_totals(st);
    T_CHECK(same_agent_totals(&before, &after));
    T_EQ(ru.agent_windows, 2);
    T_EQ(after.windows_60s, 2);
    T_EQ(after.windows_90s, 1);
    T_EQ(after.first_90s, T0 + 240 * S);
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.problems, 0);
}

/* Entries of the named database `db`, read with LMDB directly. */
static size_t
db_entries(MDB_env *env, const char *db)
{
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_stat st = {0};

    T_EQ(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    T_EQ(mdb_dbi_open(txn, db, 0, &dbi), 0);
    T_EQ(mdb_stat(txn, dbi, &st), 0);
    mdb_txn_abort(txn);
    return st.ms_entries;
}

/* Makes the store in dir what format 3 left: its agent windows in kwin, keyed (job, rank, kind,
 * start, part), and the format-3 marker. */
static void
make_format_3(const char *dir)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi awin, kwin, meta;
    MDB_cursor *c;
    MDB_val k, v, fk = {5, "format"}, fv = {strlen(RS_STORE_FORMAT_3), RS_STORE_FORMAT_3};
    int rc;

    T_EQ(mdb_env_create(&env), 0);
    T_EQ(mdb_env_set_maxdbs(env, 16), 0);
    T_EQ(mdb_env_open(env, dir, 0, 0644), 0);
    size_t had = db_entries(env, "kwin");
    T_EQ(mdb_txn_begin(env, NULL, 0, &txn), 0);
    T_EQ(mdb_dbi_open(txn, "awin", 0, &awin), 0);
    T_EQ(mdb_dbi_open(txn, "kwin", 0, &kwin), 0);
    T_EQ(mdb_dbi_open(txn, "meta", 0, &meta), 0);
    T_EQ(mdb_cursor_open(txn, awin, &c), 0);
    size_t moved = 0;
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT), moved++) {
        const struct rs_key_awin *a = k.mv_data;
        struct rs_key_kwin old;
        memcpy(old.job_id, a->job_id, 8);
        memcpy(old.rank, a->rank, 4);
        memcpy(old.kind, a->kind, 2);
        memcpy(old.start_ns, a->start_ns, 8);
        memcpy(old.part, a->part, 2);
        MDB_val ok = {sizeof old, &old};
        T_EQ(mdb_put(txn, kwin, &ok, &v, MDB_NOOVERWRITE), 0);
    }
    T_EQ(rc, MDB_NOTFOUND);
    T_CHECK(moved > 0);
    mdb_cursor_close(c);
    T_EQ(mdb_drop(txn, awin, 1), 0);
    T_EQ(mdb_put(txn, meta, &fk, &fv, 0), 0);
    T_EQ(mdb_txn_commit(txn), 0);
    T_EQ(db_entries(env, "kwin"), had + moved);
    mdb_env_close(env);
}

/* A format-3 store's agent windows stay in kwin: the scans still read them (and awin's: a late
 * contribution to one of their windows goes there and adds up), the check passes, the rollup
 * coarsens both, and deleting the job deletes both. */
static void
format_3_agent_windows(void)
{
    char dir[] = "/tmp/rs-rollup-f3-XXXXXX";
    struct rs_store_check_report rep;
    rs_store *st = t_store_open(dir, NULL);

    put_agent_windows(st, 0, 12, 5);
    struct agent_totals before = agent_totals(st);
    rs_store_close(st);
    make_format_3(dir);
    T_EQ(rs_store_open(dir, NULL, &st), 0);
    struct agent_totals f3 = agent_totals(st);
    T_CHECK(same_agent_totals(&before, &f3));
    T_EQ(f3.windows_5s, 12);

    put_agent_windows(st, 0, 1, 5); /* the first window again: in awin now */
    struct agent_totals late = agent_totals(st);
    T_EQ(late.count[0], before.count[0] + 2);
    T_EQ(late.copies, before.copies + 1);
    T_EQ(late.windows_5s, 13); /* the window in two places, both counted */
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.problems, 0);
    T_EQ(rep.kernel_windows, 12 * 2 + 2);

    struct rs_store_rollup ru = rollup(st, rs_clock_realtime_ns() + 1000 * S, 90, 5);
    struct agent_totals after = agent_totals(st);
    T_CHECK(same_agent_totals(&late, &after));
    T_EQ(ru.agent_windows, 26); /* 13 kernel windows, 13 copy windows */
    T_EQ(after.windows_5s, 0);
    T_EQ(after.windows_60s, 1);
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.problems, 0);

    /* what the rollup left, and windows in both places again, go with the job */
    put_agent_windows(st, 120, 2, 5);
    rs_store_close(st);
    make_format_3(dir);
    T_EQ(rs_store_open(dir, NULL, &st), 0);
    put_agent_windows(st, 130, 2, 5);
    T_CHECK(t_store_delete_job(st, "sum", 3) > 0);
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.kernel_windows, 0);
    t_store_remove(st, dir);
}

int
main(void)
{
    char dir[] = "/tmp/rs-rollup-XXXXXX";
    static char name_buf[NAMES][16];
    rs_store *st = NULL;

    for (int i = 0; i < NAMES; i++) {
        snprintf(name_buf[i], sizeof name_buf[i], "kernel_%d", i);
        names[i] = name_buf[i];
    }
    st = t_store_open(dir, NULL);
    T_RUN_ARG(rollup_keeps_totals, st);
    T_RUN_ARG(many_names_take_parts, st);
    T_RUN_ARG(unsummarized_steps_stay_raw, st);
    T_RUN_ARG(refusals_and_delete, st);
    T_RUN_ARG(agent_windows_coarsen, st);
    t_store_remove(st, dir);
    T_RUN(format_3_agent_windows);
    return T_DONE("storage/rollup");
}
