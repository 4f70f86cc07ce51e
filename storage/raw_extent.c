/* What of a rank is still raw (storage "Rollups"): its oldest raw kernel or memcpy record and
 * the step holding it — where rollups look for steps without a summary, and where the evaluator
 * starts catching up after a restart (nothing older can still need a summary). */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/error.h"

#include <string.h>

int
rs__store_oldest_raw(MDB_txn *txn, const rs_store *s, const uint8_t *rank_key, uint64_t *out)
{
    static const int kinds[] = {RS_SERIES_KERNEL, RS_SERIES_MEMCPY};
    MDB_cursor *c;
    int rc;

    *out = UINT64_MAX;
    if ((rc = mdb_cursor_open(txn, s->series, &c)) != 0)
        return rs__store_err(rc);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        struct rs_key_series from;
        MDB_val k = {sizeof from, &from}, v;
        memset(&from, 0, sizeof from);
        memcpy(&from, rank_key, RS_KEY_RANK_PREFIX); /* job_id, rank */
        from.kind[1] = (uint8_t)kinds[i];
        rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
        if (rc == 0 && k.mv_size == sizeof from &&
            memcmp(k.mv_data, &from, RS_KEY_KIND_PREFIX) == 0) {
            uint64_t t = rs__be64_get(((const struct rs_key_series *)k.mv_data)->start_ns);
            *out = t < *out ? t : *out;
        } else if (rc != 0 && rc != MDB_NOTFOUND) {
            break;
        }
        rc = 0;
    }
    mdb_cursor_close(c);
    return rs__store_err(rc);
}

int
rs__store_step_at_or_after(MDB_cursor *c, const uint8_t *rank_key, uint64_t from, uint64_t *num,
                           struct rs_step_value *sv)
{
    struct rs_key_step key;
    MDB_val k = {sizeof key, &key}, v;
    int rc;

    memcpy(&key, rank_key, RS_KEY_RANK_PREFIX);
    rs__be64_put(key.step, from);
    if ((rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE)) != 0)
        return rs__store_err(rc);
    if (k.mv_size != sizeof key || memcmp(k.mv_data, rank_key, RS_KEY_RANK_PREFIX) != 0 ||
        v.mv_size < sizeof *sv)
        return RS_E_NOT_FOUND; /* (measured steps' values start with the same times) */
    *num = rs__be64_get(((const struct rs_key_step *)k.mv_data)->step);
    memcpy(sv, v.mv_data, sizeof *sv);
    return 0;
}

int
rs__store_step_holding(MDB_txn *txn, const rs_store *s, const uint8_t *rank_key, uint64_t t,
                       uint64_t *step, bool *found)
{
    struct rs_step_value sv;
    uint64_t lo, hi, num;
    MDB_cursor *c;
    int rc;

    *found = false;
    if ((rc = mdb_cursor_open(txn, s->steps, &c)) != 0)
        return rs__store_err(rc);
    if ((rc = rs__store_step_at_or_after(c, rank_key, 0, &lo, &sv)) != 0)
        goto out; /* no steps */
    /* the last step that starts at or before t: binary search on step numbers (their start times
     * grow with them) */
    hi = UINT64_MAX;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2 + 1;
        if ((rc = rs__store_step_at_or_after(c, rank_key, mid, &num, &sv)) == RS_E_NOT_FOUND ||
            (rc == 0 && sv.start_ns > t)) {
            hi = mid - 1;
            rc = 0;
        } else if (rc != 0) {
            goto out;
        } else {
            lo = num;
        }
    }
    *step = lo;
    *found = true;
out:
    mdb_cursor_close(c);
    return rc == RS_E_NOT_FOUND ? 0 : rc;
}

int
rs_store_oldest_raw_step(rs_store_read *r, const char *job, uint32_t rank, uint64_t *step,
                         bool *found)
{
    uint8_t rank_key[RS_KEY_RANK_PREFIX];
    uint64_t t;
    int rc;

    *found = false;
    if ((rc = rs__store_job_key(r->txn, r->store, job, &t)) != 0)
        return rc == RS_E_NOT_FOUND ? 0 : rc; /* not found */
    rs__be64_put(rank_key, t);
    rs__be32_put(rank_key + RS_KEY_JOB_PREFIX, rank);
    if ((rc = rs__store_oldest_raw(r->txn, r->store, rank_key, &t)) != 0 || t == UINT64_MAX)
        return rc;
    return rs__store_step_holding(r->txn, r->store, rank_key, t, step, found);
}
