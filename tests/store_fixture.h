/* Temporary stores for unit tests: t_store_open makes a directory from `dir`, a mkdtemp template
 * ("/tmp/rs-NAME-XXXXXX", rewritten in place), and opens a store there with `opts` (NULL: the
 * defaults); t_store_put commits rank batches as one new agent batch (t_store_put_gpus: with GPU
 * readings, as an agent's telemetry batch); t_store_delete_job deletes
 * a job in chunks; t_store_remove closes the
 * store and deletes the directory (t_dir_remove: the directory alone). Failures are recorded with
 * T_CHECK / T_EQ (tests/t.h). */
#ifndef RS_TESTS_STORE_FIXTURE_H
#define RS_TESTS_STORE_FIXTURE_H

#include "storage/store.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <lmdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline rs_store *
t_store_open(char *dir, const struct rs_store_options *opts)
{
    rs_store *st = NULL;

    T_CHECK(mkdtemp(dir) != NULL);
    T_EQ(rs_store_open(dir, opts, &st), 0);
    return st;
}

/* Closes *st, puts k -> v into database `db` of the store in `dir` behind the store's back (an
 * entry --check must flag), and opens the store there again into *st. */
static inline void
t_store_raw_put(rs_store **st, const char *dir, const char *db, MDB_val k, MDB_val v)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;

    rs_store_close(*st);
    T_EQ(mdb_env_create(&env), 0);
    T_EQ(mdb_env_set_maxdbs(env, 32), 0);
    T_EQ(mdb_env_open(env, dir, 0, 0600), 0);
    T_EQ(mdb_txn_begin(env, NULL, 0, &txn), 0);
    T_EQ(mdb_dbi_open(txn, db, 0, &dbi), 0);
    T_EQ(mdb_put(txn, dbi, &k, &v, 0), 0);
    T_EQ(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
    T_EQ(rs_store_open(dir, NULL, st), 0);
}

/* The agent id of t_store_put's batches (tests that build their own use others). */
#define T_STORE_AGENT 0xf1c5u

/* Commits rb[0..n) as one agent batch of agent T_STORE_AGENT with a batch_seq not used before. */
static inline void
t_store_put(rs_store *st, const struct rs_rank_batch *rb, uint32_t n)
{
    static uint64_t seq;
    struct rs_agent_batch b = t_agent_batch(T_STORE_AGENT, ++seq, rb, n);
    rs_store_write *w;
    bool dup = true;

    T_EQ(rs_store_write_begin(st, &w), 0);
    T_EQ(rs_store_write_batch(w, &b, &dup), 0);
    T_CHECK(!dup);
    T_EQ(rs_store_write_commit(w), 0);
}

/* Commits rb[0..n) and the GPU readings g[0..n_gpus) as one batch of agent `agent` numbered `seq`
 * (the caller numbers: a number used before is a duplicate and stores nothing). */
static inline void
t_store_put_gpus(rs_store *st, uint64_t agent, uint64_t seq, const struct rs_rank_batch *rb,
                 uint32_t n, const struct rs_gpu_sample *g, uint32_t n_gpus)
{
    struct rs_agent_batch b = t_agent_batch(agent, seq, rb, n);
    rs_store_write *w;
    bool dup;

    b.gpus = g;
    b.n_gpus = n_gpus;
    T_EQ(rs_store_write_begin(st, &w), 0);
    T_EQ(rs_store_write_batch(w, &b, &dup), 0);
    T_EQ(rs_store_write_commit(w), 0);
}

/* Deletes job `job`, `per_txn` entries a transaction, until it is gone; returns the entries
 * deleted. */
static inline uint64_t
t_store_delete_job(rs_store *st, const char *job, size_t per_txn)
{
    rs_store_write *w;
    uint64_t deleted = 0;
    bool done = false;

    for (int rounds = 0; !done && rounds < 100000; rounds++) {
        T_EQ(rs_store_write_begin(st, &w), 0);
        T_EQ(rs_store_delete_job(w, job, per_txn, &deleted, &done), 0);
        T_EQ(rs_store_write_commit(w), 0);
    }
    T_CHECK(done);
    return deleted;
}

/* Rolls up with a clock of `now`, `raw_ns` of each rank's newest data kept raw and windows of
 * `window_ns`, in transactions of at most `per_txn` records, until done; returns the totals. */
static inline struct rs_store_rollup
t_store_rollup(rs_store *st, uint64_t now, uint64_t raw_ns, uint64_t window_ns, size_t per_txn)
{
    struct rs_store_rollup ru;
    bool done = false;

    memset(&ru, 0, sizeof ru);
    ru.now_ns = now;
    ru.raw_ns = raw_ns;
    ru.window_ns = window_ns;
    for (int rounds = 0; !done && rounds < 100000; rounds++) {
        rs_store_write *w;
        T_EQ(rs_store_write_begin(st, &w), 0);
        T_EQ(rs_store_rollup_step(w, &ru, per_txn, &done), 0);
        T_EQ(rs_store_write_commit(w), 0);
    }
    T_CHECK(done);
    return ru;
}

static inline void
t_dir_remove(const char *dir)
{
    char cmd[320];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    T_EQ(system(cmd), 0);
}

static inline void
t_store_remove(rs_store *st, const char *dir)
{
    rs_store_close(st);
    t_dir_remove(dir);
}

#endif
