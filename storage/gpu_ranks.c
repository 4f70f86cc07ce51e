/* GPU UUID -> the rank that reported it last, as a table of the store (keys.h gpu_ranks), so that
 * the NVML readings an agent sends — which name only the GPU — are filed under their rank at once
 * after a server restart (an in-memory map started empty, and every reading until the GPU's
 * collector sent again was dropped). Kept by the rank batches, in their transaction. */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/error.h"

#include <string.h>

/* The key of `uuid`: false for "" or one too long to be a rank's (the ranks table would hold it
 * cut; the collector's UUIDs are "GPU-" and 36 characters). */
static bool
uuid_key(const char *uuid, MDB_val *k)
{
    size_t n = uuid ? strnlen(uuid, RS_STORE_UUID_MAX) : 0;

    if (n == 0 || n >= RS_STORE_UUID_MAX)
        return false;
    *k = (MDB_val){n, (void *)uuid};
    return true;
}

/* The entry of `uuid`: 0 (*out set), RS_E_NOT_FOUND or a storage error (RS_E_CORRUPT for a value
 * of another size). */
static int
entry_get(MDB_txn *txn, const rs_store *s, const char *uuid, struct rs_gpu_rank_value *out)
{
    MDB_val k, v;
    int rc;

    if (!uuid_key(uuid, &k))
        return RS_E_NOT_FOUND;
    if ((rc = rs__store_err(mdb_get(txn, s->gpu_ranks, &k, &v))) != 0)
        return rc;
    if (v.mv_size != sizeof *out)
        return RS_E_CORRUPT;
    memcpy(out, v.mv_data, sizeof *out);
    return 0;
}

/* Deletes the entry of `uuid` when it names (job_id, rank). */
static int
drop_if_names(MDB_txn *txn, const rs_store *s, const char *uuid, uint64_t job_id, uint32_t rank,
              bool *dropped)
{
    struct rs_gpu_rank_value e;
    MDB_val k;
    int rc = entry_get(txn, s, uuid, &e);

    *dropped = false;
    if (rc == RS_E_NOT_FOUND || (rc == 0 && (e.job_id != job_id || e.rank != rank)))
        return 0;
    if (rc != 0 && rc != RS_E_CORRUPT)
        return rc;
    uuid_key(uuid, &k);
    if ((rc = rs__store_err(mdb_del(txn, s->gpu_ranks, &k, NULL))) == 0)
        *dropped = true;
    return rc;
}

int
rs__gpu_rank_note(rs_store_write *w, const char *old_uuid, const char *uuid, uint64_t job_id,
                  uint32_t rank)
{
    struct rs_gpu_rank_value e;
    MDB_val k, v = {sizeof e, &e};
    bool dropped;
    int rc;

    if (!uuid_key(uuid, &k))
        return 0;
    if (old_uuid && old_uuid[0] && strcmp(old_uuid, uuid) != 0 &&
        (rc = drop_if_names(w->txn, w->store, old_uuid, job_id, rank, &dropped)) != 0)
        return rc;
    rc = entry_get(w->txn, w->store, uuid, &e);
    if (rc == 0 && e.job_id == job_id && e.rank == rank)
        return 0; /* the common case: one lookup, no page dirtied */
    if (rc != 0 && rc != RS_E_NOT_FOUND && rc != RS_E_CORRUPT)
        return rc;
    e = (struct rs_gpu_rank_value){job_id, rank, 0};
    return rs__store_err(mdb_put(w->txn, w->store->gpu_ranks, &k, &v, 0));
}

int
rs__gpu_rank_get(MDB_txn *txn, const rs_store *s, const char *uuid, uint64_t *job_id,
                 uint32_t *rank)
{
    struct rs_gpu_rank_value e;
    struct rs_key_rank key;
    struct rs_rank_value rv;
    MDB_val k = {sizeof key, &key}, v;
    int rc = entry_get(txn, s, uuid, &e);

    if (rc != 0)
        return rc == RS_E_CORRUPT ? RS_E_NOT_FOUND : rc; /* (--check reports it) */
    /* the rank must still exist and still report this GPU: never file readings under a rank the
     * entry outlived */
    rs__be64_put(key.job_id, e.job_id);
    rs__be32_put(key.rank, e.rank);
    if ((rc = rs__store_err(mdb_get(txn, s->ranks, &k, &v))) != 0)
        return rc;
    if (v.mv_size != sizeof rv)
        return RS_E_NOT_FOUND;
    memcpy(&rv, v.mv_data, sizeof rv);
    if (strncmp(rv.gpu_uuid, uuid, sizeof rv.gpu_uuid) != 0)
        return RS_E_NOT_FOUND;
    *job_id = e.job_id;
    *rank = e.rank;
    return 0;
}

int
rs__gpu_ranks_forget_job(MDB_txn *txn, const rs_store *s, const uint8_t *job_id, size_t *budget,
                         uint64_t *deleted)
{
    MDB_cursor *c;
    MDB_val k = {RS_KEY_JOB_PREFIX, (void *)job_id}, v;
    uint64_t id = rs__be64_get(job_id);
    int rc = mdb_cursor_open(txn, s->ranks, &c), op = MDB_SET_RANGE;

    if (rc != 0)
        return rs__store_err(rc);
    /* the ranks are not deleted here: a walk after a cut-short one visits them again, harmlessly */
    while (*budget > 0 && (rc = mdb_cursor_get(c, &k, &v, op)) == 0) {
        struct rs_rank_value rv;
        bool dropped;
        op = MDB_NEXT;
        if (k.mv_size < RS_KEY_JOB_PREFIX || memcmp(k.mv_data, job_id, RS_KEY_JOB_PREFIX) != 0)
            break;
        if (k.mv_size != sizeof(struct rs_key_rank) || v.mv_size != sizeof rv)
            continue; /* the consistency check reports it */
        memcpy(&rv, v.mv_data, sizeof rv);
        rv.gpu_uuid[sizeof rv.gpu_uuid - 1] = '\0';
        if ((rc = drop_if_names(txn, s, rv.gpu_uuid, id,
                                rs__be32_get((const uint8_t *)k.mv_data + RS_KEY_JOB_PREFIX),
                                &dropped)) != 0)
            break;
        *budget -= dropped;
        *deleted += dropped;
    }
    mdb_cursor_close(c);
    return rc == MDB_NOTFOUND ? 0 : rs__store_err(rc);
}
