/* Unit tests of storage limits and key encoding: a full map is an error the writer can answer
 * (RETRY: RS_E_FULL, whichever write path meets it), never a crash, and the store stays readable;
 * reader-slot exhaustion is an error, not a hang; encoded key order equals tuple order (property
 * test over random tuples). */
#include "common/error.h"
#include "storage/keys.h"
#include "storage/store.h"
#include "tests/store_fixture.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {"kernel"};

/* Writes b in a transaction of its own: 0 or the first error (the transaction then aborted). */
static int
commit_batch(rs_store *st, const struct rs_agent_batch *b)
{
    rs_store_write *w;
    bool dup;
    int rc;

    if ((rc = rs_store_write_begin(st, &w)) != 0)
        return rc;
    if ((rc = rs_store_write_batch(w, b, &dup)) != 0) {
        rs_store_write_abort(w);
        return rc;
    }
    return rs_store_write_commit(w);
}

static int
write_batch(rs_store *st, uint64_t seq)
{
    static struct rs_kernel_record k[2000];
    struct rs_rank_batch rb = {.identity = T_IDENTITY("full", 0, 1, "GPU"),
                               T_RECORDS(strings, names, 1),
                               T_RECORDS(kernels, k, 2000)};
    struct rs_agent_batch b = t_agent_batch(1, seq, &rb, 1);

    for (int i = 0; i < 2000; i++)
        k[i] =
            (struct rs_kernel_record){seq * 100000 + i * 10, seq * 100000 + i * 10 + 5, 0, 7, 0, 0};
    return commit_batch(st, &b);
}

static void
map_full_is_an_error(void)
{
    char dir[] = "/tmp/rs-full-XXXXXX";
    struct rs_store_options opts = {.map_size = 1u << 20}; /* a 1 MiB map */
    struct rs_store_check_report rep;
    rs_store *st = NULL;
    int rc = 0;
    uint64_t seq;

    st = t_store_open(dir, &opts);
    for (seq = 1; seq < 1000 && (rc = write_batch(st, seq)) == 0; seq++)
        ;
    T_EQ(rc, RS_E_FULL);
    T_CHECK(seq > 2);                          /* some batches fit before */
    T_EQ(write_batch(st, seq + 1), RS_E_FULL); /* and it stays an error, not a crash */
    T_EQ(rs_store_check(st, &rep), 0);         /* what was committed is intact */
    T_EQ(rep.batches, seq - 1);
    t_store_remove(st, dir);
}

/* The write paths of an agent batch: each puts into other databases, through other helpers. */
enum write_path {
    PATH_KERNELS,
    PATH_MEMCPYS,
    PATH_STALLS,
    PATH_COLLECTIVES,
    PATH_STEPS,
    PATH_KERNEL_TOTALS,
    PATH_COPY_TOTALS,
    PATH_STRINGS,
    PATH_MERGED_TOTALS, /* new names in the same windows: stored windows read, merged, rewritten */
    PATH_COUNT
};

#define PATH_RECORDS 1000

/* Writes batch `seq` holding PATH_RECORDS records of one path only (new ones each time). */
static int
write_path_batch(rs_store *st, enum write_path p, uint64_t seq)
{
    static struct rs_memcpy_record m[PATH_RECORDS];
    static struct rs_stall_record x[PATH_RECORDS];
    static struct rs_collective_record c[PATH_RECORDS];
    static struct rs_step_record s[PATH_RECORDS];
    static struct rs_kernel_total kt[PATH_RECORDS];
    static struct rs_copy_total ct[PATH_RECORDS];
    static char text[PATH_RECORDS][64];
    static const char *strs[PATH_RECORDS];
    const bool merged = p == PATH_MERGED_TOTALS, many_names = p == PATH_STRINGS || merged;

    if (p == PATH_KERNELS)
        return write_batch(st, seq); /* 2,000 kernels */
    for (uint64_t i = 0; i < PATH_RECORDS; i++) {
        uint64_t t = seq * 1000000000000ull + i * 1000000000ull; /* a second apart */
        m[i] = (struct rs_memcpy_record){t, t + 5, 4096, RS_COPY_HTOD, 7};
        x[i] = (struct rs_stall_record){i, 3, 0, 0, 1};
        c[i] = (struct rs_collective_record){
            t, t + 5, 64, 77, seq * PATH_RECORDS + i, RS_COLL_ALLREDUCE, 0, 1, true};
        s[i] =
            (struct rs_step_record){.step = seq * PATH_RECORDS + i, .start_ns = t, .end_ns = t + 5};
        /* merged: each batch adds its new names to the same ten windows */
        kt[i] = (struct rs_kernel_total){merged ? (i % 10) * 1000000000ull : t,
                                         1000000000ull,
                                         merged ? (uint32_t)i : 0,
                                         2,
                                         10,
                                         6};
        ct[i] = (struct rs_copy_total){t, 1000000000ull, RS_COPY_HTOD, 2, 10, 6, 8192};
        snprintf(text[i], sizeof text[i], "kernel_%llu_%llu_with_a_long_name",
                 (unsigned long long)seq, (unsigned long long)i);
        strs[i] = text[i];
    }
#define N_OF(path) (p == (path) ? PATH_RECORDS : 0)
    struct rs_rank_batch rb = {
        .identity = T_IDENTITY("full", 0, 1, "GPU"),
        .clock = {seq * 1000000000000ull, seq * 1000000000000ull},
        T_RECORDS(strings, many_names ? strs : names, many_names ? PATH_RECORDS : 1),
        T_RECORDS(memcpys, m, N_OF(PATH_MEMCPYS)),
        T_RECORDS(stalls, x, N_OF(PATH_STALLS)),
        T_RECORDS(collectives, c, N_OF(PATH_COLLECTIVES)),
        T_RECORDS(steps, s, N_OF(PATH_STEPS)),
        .kernel_totals = kt,
        .n_kernel_totals = N_OF(PATH_KERNEL_TOTALS) + N_OF(PATH_MERGED_TOTALS),
        .copy_totals = ct,
        .n_copy_totals = N_OF(PATH_COPY_TOTALS)};
#undef N_OF
    struct rs_agent_batch b = t_agent_batch(2, seq, &rb, 1);
    return commit_batch(st, &b);
}

/* Whichever put, cursor or commit finds the map full, the caller gets RS_E_FULL (what the writer
 * answers RETRY to) — not an LMDB code, a positive errno or RS_E_STORE — and the store stays
 * consistent. */
static void
map_full_on_every_write_path(void)
{
    for (int p = 0; p < PATH_COUNT; p++) {
        char dir[] = "/tmp/rs-full-path-XXXXXX";
        struct rs_store_options opts = {.map_size = 1u << 20};
        struct rs_store_check_report rep;
        rs_store *st = t_store_open(dir, &opts);
        uint64_t seq;
        int rc = 0;

        for (seq = 1; seq < 1000 && (rc = write_path_batch(st, p, seq)) == 0; seq++)
            ;
        if (rc != RS_E_FULL)
            fprintf(stderr, "  path %d: %d (%s)\n", p, rc, rs_strerror(rc));
        T_EQ(rc, RS_E_FULL);
        T_CHECK(seq > 2);
        T_EQ(write_path_batch(st, p, seq + 1), RS_E_FULL);
        T_EQ(rs_store_check(st, &rep), 0);
        T_EQ(rep.batches, seq - 1);
        t_store_remove(st, dir);
    }
}

/* Step summaries (the evaluator's writes) on a full map: RS_E_FULL too. */
static void
map_full_step_summaries(void)
{
    char dir[] = "/tmp/rs-full-sum-XXXXXX";
    struct rs_store_options opts = {.map_size = 1u << 20};
    static struct rs_step_summary v[PATH_RECORDS];
    rs_store *st = t_store_open(dir, &opts);
    uint64_t round;
    int rc = 0;

    T_EQ(write_path_batch(st, PATH_STEPS, 1), 0); /* the job */
    for (round = 0; round < 1000 && rc == 0; round++) {
        rs_store_write *w;
        for (uint64_t i = 0; i < PATH_RECORDS; i++)
            v[i] = (struct rs_step_summary){
                .step = round * PATH_RECORDS + i, .start_ns = i, .end_ns = i + 1, .step_ns = 1};
        T_EQ(rs_store_write_begin(st, &w), 0);
        if ((rc = rs_store_step_summaries_put(w, "full", 0, v, PATH_RECORDS)) == 0)
            rc = rs_store_write_commit(w);
        else
            rs_store_write_abort(w);
    }
    T_EQ(rc, RS_E_FULL);
    T_CHECK(round > 2);
    t_store_remove(st, dir);
}

static void
reader_slots_exhausted(void)
{
    char dir[] = "/tmp/rs-readers-XXXXXX";
    struct rs_store_options opts = {.max_readers = 2};
    rs_store_read *r[3] = {NULL, NULL, NULL};
    rs_store *st = NULL;

    st = t_store_open(dir, &opts);
    T_EQ(rs_store_read_begin(st, &r[0]), 0);
    T_EQ(rs_store_read_begin(st, &r[1]), 0);
    T_EQ(rs_store_read_begin(st, &r[2]), RS_E_FULL);
    rs_store_read_end(r[0]);
    T_EQ(rs_store_read_begin(st, &r[2]), 0); /* a freed slot is usable again */
    rs_store_read_end(r[1]);
    rs_store_read_end(r[2]);
    t_store_remove(st, dir);
}

struct tuple {
    uint64_t job;
    uint32_t rank;
    uint16_t kind;
    uint64_t t;
    uint32_t uniq;
    struct rs_key_series key;
};

static int
cmp_tuple(const struct tuple *a, const struct tuple *b)
{
#define CMP(f)                                                                                     \
    if (a->f != b->f)                                                                              \
        return a->f < b->f ? -1 : 1;
    CMP(job)
    CMP(rank)
    CMP(kind)
    CMP(t)
    CMP(uniq)
#undef CMP
    return 0;
}

static uint64_t
rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void
key_order_is_tuple_order(void)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    int mismatches = 0;

    for (int i = 0; i < 100000; i++) {
        struct tuple t[2];
        for (int j = 0; j < 2; j++) {
            /* small ranges too, so equal prefixes happen often */
            t[j].job = rnd(&seed) % (i % 2 ? 4 : UINT64_MAX);
            t[j].rank = (uint32_t)(rnd(&seed) % (i % 3 ? 8 : UINT32_MAX));
            t[j].kind = (uint16_t)(rnd(&seed) % 4);
            t[j].t = rnd(&seed) % (i % 5 ? 16 : UINT64_MAX);
            t[j].uniq = (uint32_t)rnd(&seed);
            rs__be64_put(t[j].key.job_id, t[j].job);
            rs__be32_put(t[j].key.rank, t[j].rank);
            t[j].key.kind[0] = (uint8_t)(t[j].kind >> 8);
            t[j].key.kind[1] = (uint8_t)t[j].kind;
            rs__be64_put(t[j].key.start_ns, t[j].t);
            rs__be32_put(t[j].key.uniq, t[j].uniq);
        }
        int want = cmp_tuple(&t[0], &t[1]);
        int got = memcmp(&t[0].key, &t[1].key, sizeof t[0].key);
        got = got < 0 ? -1 : got > 0;
        mismatches += want != got;
        T_EQ(rs__be64_get(t[0].key.start_ns), t[0].t);
    }
    T_EQ(mismatches, 0);
}

int
main(void)
{
    T_RUN(map_full_is_an_error);
    T_RUN(map_full_on_every_write_path);
    T_RUN(map_full_step_summaries);
    T_RUN(reader_slots_exhausted);
    T_RUN(key_order_is_tuple_order);
    return T_DONE("storage/limits");
}
