/* Unit tests of storage/: put/scan, deduplication, summaries, foreign data dirs, and the error
 * convention (LMDB's codes become negative errno or RS_E_* codes where LMDB is called). */
#include "common/error.h"
#include "storage/store.h"
#include "storage/store_int.h"
#include "tests/store_fixture.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <errno.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const names[] = {"k_gemm", "nccl_allreduce"};
static const struct rs_memcpy_record copies[2] = {{1000100, 1000300, 4096, RS_COPY_HTOD, 7},
                                                  {1000400, 1000450, 64, RS_COPY_MEMSET, 7}};

static struct rs_agent_batch
batch(uint64_t seq, uint32_t rank, struct rs_rank_batch *rb, struct rs_kernel_record *k,
      struct rs_collective_record *c, struct rs_step_record *s)
{
    for (int i = 0; i < 100; i++)
        k[i] = (struct rs_kernel_record){
            seq * 1000000 + i * 1000, seq * 1000000 + i * 1000 + 500, 0, 7, 0, 0};
    *c = (struct rs_collective_record){
        seq * 1000000, seq * 1000000 + 2000, 64, 77, seq, RS_COLL_ALLREDUCE, 1, 17, false};
    *s = (struct rs_step_record){
        .step = seq, .start_ns = seq * 1000000, .end_ns = seq * 1000000 + 900000};
    *rb = (struct rs_rank_batch){.identity = T_IDENTITY("job-a", rank, 2, "GPU-1"),
                                 .clock = {1000, 1500},
                                 .collector_flags = RS_COLLECTOR_CLOCK_REPLACED,
                                 .collector_status = "clock",
                                 T_RECORDS(strings, names, 2),
                                 T_RECORDS(kernels, k, 100),
                                 T_RECORDS(collectives, c, 1),
                                 T_RECORDS(steps, s, 1),
                                 T_RECORDS(memcpys, copies, seq == 1 ? 2 : 0)};
    return t_agent_batch(1, seq, rb, 1);
}

static int
count_kernel(void *arg, const struct rs_kernel_record *k, const char *name, uint64_t name_hash)
{
    (*(int *)arg)++;
    return strcmp(name, "k_gemm") == 0 ? 0 : -1;
}

static int
check_copy(void *arg, const struct rs_memcpy_record *m)
{
    int *n = arg;
    T_CHECK(memcmp(m, &copies[*n % 2], sizeof *m) == 0); /* stored as sent, in time order */
    (*n)++;
    return 0;
}

struct colls {
    int n;
    uint32_t ranks[4];
};

static int
count_coll(void *arg, uint32_t rank, const struct rs_collective_record *c)
{
    struct colls *x = arg;
    if (x->n < 4)
        x->ranks[x->n] = rank;
    x->n++;
    return 0;
}

static int
get_rank(void *arg, const struct rs_rank_info *r)
{
    if (r->rank == 0)
        *(struct rs_rank_info *)arg = *r;
    return 0;
}

static void
put_scan_dedup(void)
{
    char dir[] = "/tmp/rs-store-test-XXXXXX";
    struct rs_kernel_record k[100];
    struct rs_collective_record c;
    struct rs_step_record s;
    struct rs_rank_batch rb;
    rs_store *st = NULL;
    rs_store_write *w;
    rs_store_read *r;
    bool dup = true;
    uint64_t n = 0;

    st = t_store_open(dir, NULL);
    T_EQ(rs_store_write_begin(st, &w), 0);
    struct rs_agent_batch b1 = batch(1, 0, &rb, k, &c, &s);
    T_EQ(rs_store_write_batch(w, &b1, &dup), 0);
    T_CHECK(!dup);
    T_EQ(rs_store_write_commit(w), 0);
    /* the same (agent, seq) again: a duplicate, nothing written */
    T_EQ(rs_store_write_begin(st, &w), 0);
    T_EQ(rs_store_write_batch(w, &b1, &dup), 0);
    T_CHECK(dup);
    struct rs_rank_batch rb2;
    struct rs_kernel_record k2[100];
    struct rs_collective_record c2;
    struct rs_step_record s2;
    struct rs_agent_batch b2 = batch(1, 1, &rb2, k2, &c2, &s2);
    b2.batch_seq = 2; /* rank 1, same collective seq 1 */
    T_EQ(rs_store_write_batch(w, &b2, &dup), 0);
    T_CHECK(!dup);
    T_EQ(rs_store_write_commit(w), 0);
    rs_store_close(st);

    /* reopen: everything is there */
    T_EQ(rs_store_open(dir, NULL, &st), 0);
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_store_batches_count(r, &n), 0);
    T_EQ(n, 2);
    struct rs_job_info job;
    T_EQ(rs_store_job_get(r, "job-a", &job), 0);
    T_EQ(job.n_ranks, 2);
    T_EQ(job.world_size, 2);
    T_EQ(rs_store_job_get(r, "nope", &job), RS_E_NOT_FOUND);
    struct rs_rank_info info = {0};
    T_EQ(rs_store_ranks_scan(r, "job-a", get_rank, &info), 0);
    T_EQ(info.n_kernels, 100);
    T_EQ(info.kernel_ns, 100 * 500);
    T_EQ(info.n_steps, 1);
    T_EQ(info.batches, 1);
    T_EQ(info.clock_offset_ns, 500);
    T_EQ(info.collector_flags, RS_COLLECTOR_CLOCK_REPLACED);
    T_CHECK(strcmp(info.collector_status, "clock") == 0);
    int nk = 0;
    T_EQ(rs_store_kernels_scan(r, "job-a", 0, 0, UINT64_MAX, count_kernel, &nk), 0);
    T_EQ(nk, 100);
    nk = 0;
    T_EQ(rs_store_kernels_scan(r, "job-a", 0, 2000000, UINT64_MAX, count_kernel, &nk), 0);
    T_EQ(nk, 0);
    int ncopies = 0;
    T_EQ(rs_store_memcpys_scan(r, "job-a", 0, 0, UINT64_MAX, check_copy, &ncopies), 0);
    T_EQ(ncopies, 2);
    T_EQ(info.n_memcpys, 2);
    ncopies = 0;
    T_EQ(rs_store_memcpys_scan(r, "job-a", 0, 2000000, UINT64_MAX, check_copy, &ncopies), 0);
    T_EQ(ncopies, 0);
    struct colls cs = {0};
    T_EQ(rs_store_collectives_scan(r, "job-a", count_coll, &cs), 0);
    T_EQ(cs.n, 2); /* both ranks of instance (77, AllReduce, 1), adjacent */
    T_CHECK(cs.ranks[0] == 0 && cs.ranks[1] == 1);
    rs_store_read_end(r);
    t_store_remove(st, dir);
}

static void
refuses_foreign_dirs(void)
{
    char dir[] = "/tmp/rs-store-test-XXXXXX", path[128];
    rs_store *st = NULL;
    FILE *f;

    T_CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/data.mdb", dir);
    f = fopen(path, "w");
    fprintf(f, "this is not an LMDB file, but it is long enough to be read as one... %0500d", 0);
    fclose(f);
    T_EQ(rs_store_open(dir, NULL, &st), RS_E_CORRUPT);
    T_CHECK(st == NULL);
    unlink(path);
    snprintf(path, sizeof path, "%s/file", dir);
    f = fopen(path, "w");
    fclose(f);
    T_EQ(rs_store_open(path, NULL, &st), -ENOTDIR);
    T_CHECK(st == NULL);
    t_dir_remove(dir); /* (with the lock file the refused open left) */
}

/* An LMDB environment of someone else's (a database that is not ours, no format marker) is
 * refused as RS_E_CORRUPT, and left as it was. */
static void
refuses_foreign_lmdb(void)
{
    char dir[] = "/tmp/rs-store-test-XXXXXX";
    rs_store *st = NULL;
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_val k = {3, "key"}, v = {5, "value"};

    T_CHECK(mkdtemp(dir) != NULL);
    T_EQ(mdb_env_create(&env), 0);
    T_EQ(mdb_env_set_maxdbs(env, 4), 0);
    T_EQ(mdb_env_open(env, dir, 0, 0644), 0);
    T_EQ(mdb_txn_begin(env, NULL, 0, &txn), 0);
    T_EQ(mdb_dbi_open(txn, "theirs", MDB_CREATE, &dbi), 0);
    T_EQ(mdb_put(txn, dbi, &k, &v, 0), 0);
    T_EQ(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
    T_EQ(rs_store_open(dir, NULL, &st), RS_E_CORRUPT);
    T_CHECK(st == NULL);
    T_EQ(mdb_env_create(&env), 0);
    T_EQ(mdb_env_set_maxdbs(env, 4), 0);
    T_EQ(mdb_env_open(env, dir, MDB_RDONLY, 0644), 0);
    T_EQ(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    T_EQ(mdb_dbi_open(txn, "meta", 0, &dbi), MDB_NOTFOUND); /* nothing written */
    mdb_txn_abort(txn);
    mdb_env_close(env);
    t_dir_remove(dir);
}

/* Every code of an mdb_* call becomes 0 or a negative code that rs_strerror names: the one
 * conversion storage/ applies where it calls LMDB. */
static void
lmdb_codes_become_project_codes(void)
{
    static const struct {
        int mdb, want;
    } map[] = {
        {MDB_SUCCESS, 0},
        {MDB_NOTFOUND, RS_E_NOT_FOUND},
        {MDB_KEYEXIST, -EEXIST},
        {MDB_MAP_FULL, RS_E_FULL},
        {MDB_TXN_FULL, RS_E_FULL},
        {MDB_READERS_FULL, RS_E_FULL},
        {MDB_INVALID, RS_E_CORRUPT},
        {MDB_VERSION_MISMATCH, RS_E_CORRUPT},
        {MDB_CORRUPTED, RS_E_CORRUPT},
        {MDB_PAGE_NOTFOUND, RS_E_CORRUPT},
        {MDB_INCOMPATIBLE, RS_E_CORRUPT},
        {MDB_BAD_VALSIZE, RS_E_CORRUPT},
        {MDB_PANIC, RS_E_STORE},
        {MDB_MAP_RESIZED, RS_E_STORE},
        {MDB_BAD_TXN, RS_E_STORE},
        {MDB_DBS_FULL, RS_E_STORE},
        {ENOMEM, -ENOMEM}, /* LMDB passes system errors through as positive errno */
        {ENOSPC, -ENOSPC},
        {EIO, -EIO},
        {EACCES, -EACCES},
        {EINVAL, -EINVAL},
    };

    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        int got = rs__store_err(map[i].mdb);
        T_EQ(got, map[i].want);
        T_CHECK(got <= 0);
        T_CHECK(strcmp(rs_strerror(got), "unknown error") != 0);
    }
    for (int mdb = MDB_KEYEXIST; mdb <= MDB_LAST_ERRCODE; mdb++) { /* every MDB_* code */
        int got = rs__store_err(mdb);
        T_CHECK(got < 0 && strcmp(rs_strerror(got), "unknown error") != 0);
    }
}

int
main(void)
{
    T_RUN(put_scan_dedup);
    T_RUN(refuses_foreign_dirs);
    T_RUN(refuses_foreign_lmdb);
    T_RUN(lmdb_codes_become_project_codes);
    return T_DONE("storage/store");
}
