/* Job keys (see store_int.h "Job keys"): the 8-byte prefix that every key of a job starts with,
 * interned per job name so that two names can never share it. */
#include "storage/store_int.h"

#include "common/error.h"
#include "common/hash.h"
#include "proto/wire.h"
#include "storage/keys.h"

#include <string.h>

/* Weak, so that a unit test can give names a hash that collides (a real FNV-1a collision takes a
 * search); the store itself never replaces it. */
__attribute__((weak)) uint64_t
rs__store_job_hash(const char *job, size_t len)
{
    return rs_hash_fnv1a64(job, len);
}

int
rs__store_job_key(MDB_txn *txn, const rs_store *s, const char *job, uint64_t *id)
{
    MDB_val k = {strlen(job), (void *)job}, v;
    int rc = rs__store_err(mdb_get(txn, s->job_keys, &k, &v));

    if (rc == 0) {
        if (v.mv_size != RS_KEY_JOB_PREFIX)
            return RS_E_CORRUPT;
        *id = rs__be64_get(v.mv_data);
        return 0;
    }
    if (rc != RS_E_NOT_FOUND)
        return rc;
    /* a job of a store written before job keys (format 4 and older, read as it is) */
    if ((rc = rs__store_err(mdb_get(txn, s->jobs, &k, &v))) != 0)
        return rc;
    *id = rs__store_job_hash(job, k.mv_size);
    return 0;
}

/* Records id <-> job in both maps. */
static int
record(MDB_txn *txn, const rs_store *s, const char *job, uint64_t id)
{
    uint8_t key[RS_KEY_JOB_PREFIX];
    MDB_val name = {strlen(job), (void *)job}, idv = {sizeof key, key};
    int rc;

    rs__be64_put(key, id);
    if ((rc = rs__store_err(mdb_put(txn, s->job_ids, &idv, &name, 0))) != 0)
        return rc;
    return rs__store_err(mdb_put(txn, s->job_keys, &name, &idv, 0));
}

/* True (with rc 0) when `id` belongs to a job other than `job`. */
static int
taken(MDB_txn *txn, const rs_store *s, uint64_t id, const char *job, bool *by_other)
{
    uint8_t key[RS_KEY_JOB_PREFIX];
    MDB_val k = {sizeof key, key}, v;
    int rc;

    rs__be64_put(key, id);
    rc = rs__store_err(mdb_get(txn, s->job_ids, &k, &v));
    if (rc == RS_E_NOT_FOUND) {
        *by_other = false;
        return 0;
    }
    if (rc != 0)
        return rc;
    *by_other = !(v.mv_size == strlen(job) && memcmp(v.mv_data, job, v.mv_size) == 0);
    return 0;
}

int
rs__store_job_intern(MDB_txn *txn, const rs_store *s, const char *job, uint64_t *id)
{
    MDB_val k = {strlen(job), (void *)job}, v;
    uint64_t cand;
    bool other = true;
    int rc = rs__store_err(mdb_get(txn, s->job_keys, &k, &v));

    if (rc == 0)
        return rs__store_job_key(txn, s, job, id);
    if (rc != RS_E_NOT_FOUND)
        return rc;
    cand = rs__store_job_hash(job, k.mv_size);
    if ((rc = rs__store_err(mdb_get(txn, s->jobs, &k, &v))) == 0) {
        /* a job written before job keys keeps the key its data has */
        if ((rc = record(txn, s, job, cand)) == 0)
            *id = cand;
        return rc;
    }
    if (rc != RS_E_NOT_FOUND)
        return rc;
    for (unsigned tries = 0; other; tries++) {
        if (tries == RS_KEY_PROBES)
            return RS_E_FULL; /* not reachable short of 2^64 jobs: a guard, not a plan */
        if ((rc = taken(txn, s, cand, job, &other)) != 0)
            return rc;
        if (other)
            cand += RS_KEY_PROBE_STEP;
    }
    if ((rc = record(txn, s, job, cand)) == 0)
        *id = cand;
    return rc;
}

int
rs__store_job_forget(MDB_txn *txn, const rs_store *s, const char *job)
{
    MDB_val name = {strlen(job), (void *)job}, v;
    int rc = rs__store_err(mdb_get(txn, s->job_keys, &name, &v));

    if (rc == RS_E_NOT_FOUND)
        return 0;
    if (rc != 0)
        return rc;
    MDB_val idv = v;
    if ((rc = rs__store_err(mdb_del(txn, s->job_ids, &idv, NULL))) != 0 && rc != RS_E_NOT_FOUND)
        return rc;
    rc = rs__store_err(mdb_del(txn, s->job_keys, &name, NULL));
    return rc == RS_E_NOT_FOUND ? 0 : rc;
}

int
rs__store_index_jobs(MDB_txn *txn, const rs_store *s)
{
    MDB_cursor *c;
    MDB_val k, v;
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    uint64_t id;
    int rc = rs__store_err(mdb_cursor_open(txn, s->jobs, &c)), op = MDB_FIRST;

    if (rc != 0)
        return rc;
    while (rc == 0 && (rc = rs__store_err(mdb_cursor_get(c, &k, &v, op))) == 0) {
        op = MDB_NEXT;
        if (k.mv_size == 0 || k.mv_size > RS_WIRE_MAX_JOB_LEN) {
            rc = RS_E_CORRUPT;
            break;
        }
        memcpy(job, k.mv_data, k.mv_size);
        job[k.mv_size] = '\0';
        rc = rs__store_job_intern(txn, s, job, &id);
    }
    mdb_cursor_close(c);
    return rc == RS_E_NOT_FOUND ? 0 : rc;
}
