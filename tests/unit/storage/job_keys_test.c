/* Unit tests of storage/job_keys and of the names' ids (storage/ingest.c): two job names whose
 * hashes collide keep their data apart (a collision once let one job overwrite the other's ranks
 * and a delete wipe both), and so do two kernel names; keys survive a restart; a store written
 * before job keys (format 4: no maps, hashes as keys) is read as it is and indexed by the next
 * writer. The hash is replaced here so that names collide on purpose (storage/job_keys.c:
 * rs__store_job_hash is weak); a real FNV-1a collision takes a search. */
#include "common/error.h"
#include "common/hash.h"
#include "storage/keys.h"
#include "storage/store.h"
#include "storage/store_int.h"
#include "tests/store_fixture.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <lmdb.h>
#include <string.h>

/* Every name starting "clash-" hashes alike. */
uint64_t
rs__store_job_hash(const char *job, size_t len)
{
    return len > 6 && memcmp(job, "clash-", 6) == 0 ? 0x5eed5eed5eed5eedull
                                                    : rs_hash_fnv1a64(job, len);
}

static const char *const names[] = {"gemm"};

/* `n` kernels of rank `rank` of `job`. */
static void
put(rs_store *st, const char *job, uint32_t rank, size_t n)
{
    struct rs_kernel_record k[64];

    for (size_t i = 0; i < n; i++)
        k[i] = (struct rs_kernel_record){.start_ns = 1000 + i * 10, .end_ns = 1005 + i * 10};
    struct rs_rank_batch rb = {
        .identity =
            {.job = job, .rank = rank, .world_size = 2, .host = "h", .gpu_uuid = "G", .pid = 1},
        T_RECORDS(strings, names, 1),
        T_RECORDS(kernels, k, (uint32_t)n)};
    t_store_put(st, &rb, 1);
}

/* Kernels stored for (job, rank), or -1 when the job is absent. */
static long long
kernels_of(rs_store *st, const char *job, uint32_t rank)
{
    rs_store_read *r;
    struct rs_rank_info *ranks = NULL;
    size_t n = 0;
    long long got = -1;

    if (rs_store_read_begin(st, &r) != 0)
        return -2;
    if (rs_store_ranks_get(r, job, &ranks, &n) == 0) {
        got = 0;
        for (size_t i = 0; i < n; i++)
            if (ranks[i].rank == rank)
                got = (long long)ranks[i].n_kernels;
    }
    free(ranks);
    rs_store_read_end(r);
    return got;
}

static uint64_t
key_of(rs_store *st, const char *job)
{
    rs_store_read *r;
    uint64_t id = 0;

    if (rs_store_read_begin(st, &r) != 0)
        return 0;
    if (rs__store_job_key(r->txn, st, job, &id) != 0)
        id = 0;
    rs_store_read_end(r);
    return id;
}

static void
colliding_names_stay_apart(void)
{
    char dir[] = "/tmp/rs-job-keys-XXXXXX";
    struct rs_store_check_report rep;
    rs_store *st = t_store_open(dir, NULL);

    put(st, "clash-a", 0, 10);
    put(st, "clash-b", 0, 20); /* the same hash: once, it overwrote clash-a's rank 0 */
    put(st, "clash-a", 1, 5);
    T_CHECK(key_of(st, "clash-a") != key_of(st, "clash-b"));
    T_EQ(key_of(st, "clash-a"), 0x5eed5eed5eed5eedull); /* the first keeps its hash */
    T_EQ(kernels_of(st, "clash-a", 0), 10);
    T_EQ(kernels_of(st, "clash-a", 1), 5);
    T_EQ(kernels_of(st, "clash-b", 0), 20);
    T_EQ(rs_store_check(st, &rep), 0);
    T_CHECK(rep.problems == 0);
    /* an unknown name with the same hash is no job at all (not clash-a's data) */
    T_EQ(kernels_of(st, "clash-zzz", 0), -1);
    /* deleting one leaves the other whole */
    T_CHECK(t_store_delete_job(st, "clash-a", 3) > 0);
    T_EQ(kernels_of(st, "clash-a", 0), -1);
    T_EQ(kernels_of(st, "clash-b", 0), 20);
    T_EQ(rs_store_check(st, &rep), 0);
    /* the freed key goes to the next name that wants it; clash-b keeps its own across a restart */
    uint64_t b = key_of(st, "clash-b");
    rs_store_close(st);
    T_OK(rs_store_open(dir, NULL, &st));
    T_EQ(key_of(st, "clash-b"), b);
    put(st, "clash-c", 0, 7);
    T_EQ(key_of(st, "clash-c"), 0x5eed5eed5eed5eedull);
    T_EQ(kernels_of(st, "clash-c", 0), 7);
    T_EQ(kernels_of(st, "clash-b", 0), 20);
    T_EQ(rs_store_check(st, &rep), 0);
    t_store_remove(st, dir);
}

/* A store of format 4 has jobs keyed by their hash and no maps: read as it is, then indexed. */
static void
format_4_read_then_indexed(void)
{
    char dir[] = "/tmp/rs-job-keys-XXXXXX";
    struct rs_store_options keep = {.keep_format = true};
    struct rs_store_check_report rep;
    rs_store *st = t_store_open(dir, NULL);
    MDB_txn *txn;

    put(st, "old-job", 0, 12);
    /* make it what a format-4 server wrote: no maps, the old marker */
    T_OK(mdb_txn_begin(st->env, NULL, 0, &txn));
    T_OK(mdb_drop(txn, st->job_keys, 0));
    T_OK(mdb_drop(txn, st->job_ids, 0));
    /* (the marker's key is the 5 bytes "forma", as store.c has always written it) */
    MDB_val k = {5, "format"}, v = {sizeof RS_STORE_FORMAT_4 - 1, RS_STORE_FORMAT_4};
    T_OK(mdb_put(txn, st->meta, &k, &v, 0));
    T_OK(mdb_txn_commit(txn));
    rs_store_close(st);
    T_OK(rs_store_open(dir, &keep, &st)); /* --check, --compact-to: read as it is */
    T_EQ(kernels_of(st, "old-job", 0), 12);
    T_EQ(rs_store_check(st, &rep), 0);
    rs_store_close(st);
    T_OK(rs_store_open(dir, NULL, &st)); /* a writer: records the job's key, marks format 5 */
    T_EQ(key_of(st, "old-job"), rs_hash_fnv1a64("old-job", 7));
    T_OK(mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn));
    MDB_val name = {7, "old-job"};
    T_OK(mdb_get(txn, st->job_keys, &name, &v));
    T_OK(mdb_get(txn, st->meta, &k, &v));
    T_CHECK(v.mv_size == sizeof RS_STORE_FORMAT - 1 &&
            memcmp(v.mv_data, RS_STORE_FORMAT, v.mv_size) == 0);
    mdb_txn_abort(txn);
    put(st, "old-job", 1, 3);
    T_EQ(kernels_of(st, "old-job", 0), 12);
    T_EQ(kernels_of(st, "old-job", 1), 3);
    T_EQ(rs_store_check(st, &rep), 0);
    t_store_remove(st, dir);
}

struct seen {
    int gemm, conv, other;
};

static int
count_names(void *arg, const struct rs_kernel_record *k, const char *name, uint64_t hash)
{
    struct seen *s = arg;
    if (strcmp(name, "gemm") == 0)
        s->gemm++;
    else if (strcmp(name, "conv") == 0)
        s->conv++;
    else
        s->other++;
    return 0;
}

/* Kernel names whose hashes collide (as an agent sends them, string_hashes) keep their own names:
 * the second name gets the next free id instead of being shown as the first. */
static void
colliding_kernel_names(void)
{
    char dir[] = "/tmp/rs-job-keys-XXXXXX";
    static const char *const two[] = {"gemm", "conv"};
    static const uint64_t same[] = {0xabcdefull, 0xabcdefull};
    struct rs_kernel_record k[4];
    struct seen seen = {0};
    rs_store_read *r;
    rs_store *st = t_store_open(dir, NULL);

    for (int i = 0; i < 4; i++)
        k[i] = (struct rs_kernel_record){.start_ns = 1000 + 10 * (uint64_t)i,
                                         .end_ns = 1005 + 10 * (uint64_t)i,
                                         .name_id = (uint32_t)(i % 2)};
    struct rs_rank_batch rb = {
        .identity = {.job = "names", .world_size = 1, .host = "h", .gpu_uuid = "G", .pid = 1},
        .strings = two,
        .string_hashes = same,
        .n_strings = 2,
        T_RECORDS(kernels, k, 4)};
    t_store_put(st, &rb, 1);
    t_store_put(st, &rb, 1); /* again: the same ids, nothing new */
    T_OK(rs_store_read_begin(st, &r));
    T_OK(rs_store_kernels_scan(r, "names", 0, 0, UINT64_MAX, count_names, &seen));
    rs_store_read_end(r);
    T_EQ(seen.gemm, 4);
    T_EQ(seen.conv, 4);
    T_EQ(seen.other, 0);
    /* (no --check here: it recomputes each name's FNV hash, which these fake ones are not) */
    t_store_remove(st, dir);
}

int
main(void)
{
    T_RUN(colliding_names_stay_apart);
    T_RUN(format_4_read_then_indexed);
    T_RUN(colliding_kernel_names);
    return T_DONE("storage/job_keys");
}
