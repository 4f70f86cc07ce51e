/* Deleting a whole job in bounded chunks (see store.h rs_store_delete_job). */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/error.h"

#include <string.h>

/* Deletes up to *budget entries whose key starts with the job id (RS_KEY_JOB_PREFIX bytes);
 * returns 0 with *budget reduced by what was deleted, or a storage error. */
static int
delete_prefix(MDB_txn *txn, MDB_dbi dbi, const uint8_t *job_id, size_t *budget, uint64_t *deleted)
{
    MDB_cursor *c;
    MDB_val k = {RS_KEY_JOB_PREFIX, (void *)job_id}, v;
    int rc = mdb_cursor_open(txn, dbi, &c);

    if (rc != 0)
        return rs__store_err(rc);
    /* Seek the prefix again after each delete: a cursor's position after deleting the last
     * entry of a database is not one to read from (LMDB answers EINVAL). */
    while (*budget > 0) {
        k = (MDB_val){RS_KEY_JOB_PREFIX, (void *)job_id};
        if ((rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE)) != 0)
            break;
        if (k.mv_size < RS_KEY_JOB_PREFIX || memcmp(k.mv_data, job_id, RS_KEY_JOB_PREFIX) != 0)
            break;
        if ((rc = mdb_cursor_del(c, 0)) != 0)
            break;
        (*budget)--;
        (*deleted)++;
    }
    mdb_cursor_close(c);
    return rc == MDB_NOTFOUND ? 0 : rs__store_err(rc);
}

int
rs_store_delete_job(rs_store_write *w, const char *job, size_t max_entries, uint64_t *deleted,
                    bool *done)
{
    rs_store *s = w->store;
    MDB_val jk = {strlen(job), (void *)job}, jv;
    /* job_top first: its job entry (the first key) goes in the first chunk, so that a job half
     * deleted answers by scans, never by totals of what is gone */
    MDB_dbi dbis[] = {s->jtop,     s->series,   s->kwin,     s->awin,       s->steps,      s->stepsum, s->colls,
                      s->verdicts, s->captures, s->frame_seqs, s->hangs, s->ranks};
    uint8_t job_id[RS_KEY_JOB_PREFIX];
    size_t budget = max_entries;
    int rc;

    *done = false;
    if (jk.mv_size == 0 || jk.mv_size > RS_WIRE_MAX_JOB_LEN)
        return RS_E_NOT_FOUND;
    if ((rc = mdb_get(w->txn, s->jobs, &jk, &jv)) != 0)
        return rs__store_err(rc);
    uint64_t id;
    if ((rc = rs__store_job_key(w->txn, s, job, &id)) != 0)
        return rc;
    rs__be64_put(job_id, id);
    for (size_t i = 0; i < sizeof dbis / sizeof dbis[0]; i++) {
        /* the GPU map's entries of its ranks go while the ranks still say their GPUs */
        if (dbis[i] == s->ranks &&
            (rc = rs__gpu_ranks_forget_job(w->txn, s, job_id, &budget, deleted)) != 0)
            return rc;
        if ((rc = delete_prefix(w->txn, dbis[i], job_id, &budget, deleted)) != 0)
            return rc;
    }
    if (budget == 0)
        return 0; /* more may be left: the caller commits and calls again */
    /* Everything else is gone: the job entry goes last, so a crash never leaves data of a job
     * that no longer exists (the check would flag it). */
    if ((rc = mdb_del(w->txn, s->jobs, &jk, NULL)) != 0 ||
        (rc = rs__store_job_forget(w->txn, s, job)) != 0)
        return rs__store_err(rc);
    (*deleted)++;
    *done = true;
    return 0;
}

int
rs_store_expire_jobs(rs_store_write *w, uint64_t cutoff_ns, size_t max_entries, uint64_t *deleted,
                     uint64_t *jobs_deleted, bool *done)
{
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    MDB_cursor *c;
    MDB_val k, v;
    int rc = mdb_cursor_open(w->txn, w->store->jobs, &c), op = MDB_FIRST;
    bool found = false;

    *done = false;
    if (rc != 0)
        return rs__store_err(rc);
    while (!found && (rc = mdb_cursor_get(c, &k, &v, op)) == 0) {
        struct rs_job_value jv;
        op = MDB_NEXT;
        if (v.mv_size != sizeof jv || k.mv_size == 0 || k.mv_size > RS_WIRE_MAX_JOB_LEN)
            continue; /* the consistency check reports it; retention leaves it alone */
        memcpy(&jv, v.mv_data, sizeof jv);
        if (jv.received_ns < cutoff_ns) {
            memcpy(job, k.mv_data, k.mv_size);
            job[k.mv_size] = '\0';
            found = true;
        }
    }
    mdb_cursor_close(c);
    if (rc != 0 && rc != MDB_NOTFOUND)
        return rs__store_err(rc);
    if (!found) {
        *done = true;
        return 0;
    }
    bool job_done = false;
    if ((rc = rs_store_delete_job(w, job, max_entries, deleted, &job_done)) != 0)
        return rc;
    *jobs_deleted += job_done;
    return 0;
}

int
rs_store_oldest_job(rs_store_read *r, char *name, size_t len, bool *found)
{
    MDB_cursor *c;
    MDB_val k, v;
    uint64_t oldest = UINT64_MAX;
    int rc = mdb_cursor_open(r->txn, r->store->jobs, &c), op = MDB_FIRST;

    *found = false;
    if (rc != 0)
        return rs__store_err(rc);
    while ((rc = mdb_cursor_get(c, &k, &v, op)) == 0) {
        struct rs_job_value jv;
        op = MDB_NEXT;
        if (v.mv_size != sizeof jv || k.mv_size == 0 || k.mv_size >= len)
            continue; /* the consistency check reports it */
        memcpy(&jv, v.mv_data, sizeof jv);
        if (jv.received_ns < oldest) {
            oldest = jv.received_ns;
            memcpy(name, k.mv_data, k.mv_size);
            name[k.mv_size] = '\0';
            *found = true;
        }
    }
    mdb_cursor_close(c);
    return rc == MDB_NOTFOUND ? 0 : rs__store_err(rc);
}
