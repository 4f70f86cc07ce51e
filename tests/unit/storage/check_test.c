/* Unit tests of the store consistency check: a clean store passes; planted corruption (wrong value
 * size, orphan rank, bad string hash) is found and named. White-box: plants entries through LMDB.
 */
#include "common/error.h"
#include "storage/keys.h"
#include "storage/store_int.h"
#include "tests/store_fixture.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {"k"};

static rs_store *
store_with_one_batch(char *dir)
{
    struct rs_kernel_record k = {100, 200, 0, 7, 0, 0};
    struct rs_step_record s = {.step = 1, .start_ns = 50, .end_ns = 300};
    struct rs_rank_batch rb = {.identity = T_IDENTITY("job", 0, 1, "GPU"),
                               T_RECORDS(strings, names, 1),
                               T_RECORDS(kernels, &k, 1),
                               T_RECORDS(steps, &s, 1)};
    struct rs_agent_batch b = t_agent_batch(1, 1, &rb, 1);
    rs_store *st = NULL;
    rs_store_write *w;
    bool dup;

    if (!mkdtemp(dir) || rs_store_open(dir, NULL, &st) != 0 || rs_store_write_begin(st, &w) != 0)
        return NULL;
    if (rs_store_write_batch(w, &b, &dup) != 0 || rs_store_write_commit(w) != 0) {
        rs_store_close(st);
        return NULL;
    }
    return st;
}

static void
plant(rs_store *st, MDB_dbi dbi, const void *key, size_t klen, const void *val, size_t vlen)
{
    MDB_txn *txn;
    MDB_val k = {klen, (void *)key}, v = {vlen, (void *)val};

    T_EQ(mdb_txn_begin(st->env, NULL, 0, &txn), 0);
    T_EQ(mdb_put(txn, dbi, &k, &v, 0), 0);
    T_EQ(mdb_txn_commit(txn), 0);
}

static void
cleanup(rs_store *st, const char *dir)
{
    t_store_remove(st, dir);
}

static void
clean_store_passes(void)
{
    char dir[] = "/tmp/rs-check-XXXXXX";
    struct rs_store_check_report rep;
    rs_store *st = store_with_one_batch(dir);

    T_CHECK(st != NULL);
    if (!st)
        return;
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.jobs, 1);
    T_EQ(rep.ranks, 1);
    T_EQ(rep.steps, 1);
    T_EQ(rep.batches, 1);
    T_EQ(rep.problems, 0);
    cleanup(st, dir);
}

static void
planted_problems_found(void)
{
    char dir[] = "/tmp/rs-check-XXXXXX";
    struct rs_store_check_report rep;
    rs_store *st = store_with_one_batch(dir);
    struct rs_key_step sk;
    struct rs_key_rank rk;
    struct rs_key_string nk;
    struct rs_rank_value rv;

    T_CHECK(st != NULL);
    if (!st)
        return;
    memset(&sk, 0, sizeof sk);
    uint64_t id = 0;
    rs_store_read *r;
    T_OK(rs_store_read_begin(st, &r));
    T_OK(rs__store_job_key(r->txn, st, "job", &id));
    rs_store_read_end(r);
    rs__be64_put(sk.job_id, id);
    plant(st, st->steps, &sk, sizeof sk, "short", 5); /* wrong value size */
    T_EQ(rs_store_check(st, &rep), RS_E_CORRUPT);
    T_CHECK(strstr(rep.first_problem, "steps") != NULL);
    cleanup(st, dir);

    st = store_with_one_batch(strcpy(dir, "/tmp/rs-check-XXXXXX"));
    memset(&rk, 0, sizeof rk);
    memset(&rv, 0, sizeof rv);
    rv.version = RS_VALUE_VERSION;
    rs__be64_put(rk.job_id, rs__store_job_hash("no-such-job", 11));
    plant(st, st->ranks, &rk, sizeof rk, &rv, sizeof rv); /* a rank of no job */
    T_EQ(rs_store_check(st, &rep), RS_E_CORRUPT);
    T_CHECK(strstr(rep.first_problem, "does not exist") != NULL);
    cleanup(st, dir);

    st = store_with_one_batch(strcpy(dir, "/tmp/rs-check-XXXXXX"));
    rs__be64_put(nk.hash, 12345);
    plant(st, st->strings, &nk, sizeof nk, "name", 4); /* key is not the name's hash */
    T_EQ(rs_store_check(st, &rep), RS_E_CORRUPT);
    T_EQ(rep.problems, 1);
    T_CHECK(strstr(rep.first_problem, "strings") != NULL);
    cleanup(st, dir);
}

/* An agent window longer than its rank's recorded longest one: scans for windows that overlap a
 * time would miss it. */
static void
window_longer_than_its_ranks_longest(void)
{
    char dir[] = "/tmp/rs-check-XXXXXX";
    struct rs_store_check_report rep;
    rs_store *st = store_with_one_batch(dir);
    struct rs_kernel_total kt = {1000000000, 5000000000, 0, 1, 10, 10}; /* a 5 s window */
    struct rs_rank_batch rb = {.identity = T_IDENTITY("job", 0, 1, "GPU"),
                               .clock = {6000000000, 6000000000},
                               T_RECORDS(strings, names, 1),
                               .kernel_totals = &kt,
                               .n_kernel_totals = 1};
    struct rs_key_rank rk;
    struct rs_rank_value rv;
    MDB_txn *txn;
    MDB_val k = {sizeof rk, &rk}, v;

    T_CHECK(st != NULL);
    if (!st)
        return;
    t_store_put(st, &rb, 1);
    T_EQ(rs_store_check(st, &rep), 0);
    rs__be64_put(rk.job_id, rs__store_job_hash("job", 3));
    rs__be32_put(rk.rank, 0);
    T_EQ(mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn), 0);
    T_EQ(mdb_get(txn, st->ranks, &k, &v), 0);
    T_EQ(v.mv_size, sizeof rv);
    memcpy(&rv, v.mv_data, sizeof rv);
    mdb_txn_abort(txn);
    T_EQ(rv.longest_agent_window_s, 5);
    rv.longest_agent_window_s = 4;
    plant(st, st->ranks, &rk, sizeof rk, &rv, sizeof rv);
    T_EQ(rs_store_check(st, &rep), RS_E_CORRUPT);
    T_CHECK(strstr(rep.first_problem, "longer than its rank's longest") != NULL);
    cleanup(st, dir);
}

int
main(void)
{
    T_RUN(clean_store_passes);
    T_RUN(planted_problems_found);
    T_RUN(window_longer_than_its_ranks_longest);
    return T_DONE("storage/check");
}
