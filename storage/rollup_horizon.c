/* Where a rank's rollup stops (see store.h "Rollups"): the raw-retention policy, capped so that
 * no record of a step without a stored summary is rolled up — step metrics are computed from raw
 * kernels until the evaluator has summarized the step, and a step it never summarizes (the last
 * ones of a job, or steps of data that arrived faster than it ran) keeps its records. The search
 * walks only the steps whose records this pass would roll up. */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/error.h"
#include "proto/wire.h"

#include <stdio.h>
#include <string.h>

/* Whether the job of rank key `rank_key` has received nothing since now - raw (cached per job). */
static int
job_idle(rs_store_write *w, struct rs_store_rollup *ru, const uint8_t *rank_key, bool *idle)
{
    MDB_val k = {RS_KEY_JOB_PREFIX, (void *)rank_key}, name, v;
    struct rs_job_value jv;
    int rc;

    if (ru->job_known && memcmp(ru->job_id, rank_key, RS_KEY_JOB_PREFIX) == 0) {
        *idle = ru->job_idle;
        return 0;
    }
    *idle = false;
    /* the job whose key this is (job_ids; a writer has recorded every job's, store.c) */
    rc = rs__store_err(mdb_get(w->txn, w->store->job_ids, &k, &name));
    if (rc == 0)
        rc = rs__store_err(mdb_get(w->txn, w->store->jobs, &name, &v));
    if (rc != 0 && rc != RS_E_NOT_FOUND)
        return rc;
    if (rc == 0 && v.mv_size == sizeof jv) { /* else the consistency check reports it */
        memcpy(&jv, v.mv_data, sizeof jv);
        *idle = jv.received_ns + ru->raw_ns <= ru->now_ns;
    }
    memcpy(ru->job_id, rank_key, RS_KEY_JOB_PREFIX);
    ru->job_idle = *idle;
    ru->job_known = true;
    return 0;
}

/* Caps *horizon at the start of the rank's first step without a summary among the steps from the
 * one holding `from_ns` (the oldest raw record) to those starting before *horizon. */
static int
cap_at_unsummarized(rs_store_write *w, const uint8_t *rank_key, uint64_t from_ns, uint64_t *horizon)
{
    struct rs_step_value sv;
    uint64_t lo, num;
    MDB_cursor *c;
    bool found;
    int rc;

    if ((rc = rs__store_step_holding(w->txn, w->store, rank_key, from_ns, &lo, &found)) != 0 ||
        !found)
        return rc; /* no steps: nothing to wait for */
    if ((rc = mdb_cursor_open(w->txn, w->store->steps, &c)) != 0)
        return rs__store_err(rc);
    /* walk from there while steps start before the horizon: the first one without a summary caps
     * it */
    for (num = lo;;) {
        if ((rc = rs__store_step_at_or_after(c, rank_key, num, &num, &sv)) != 0 ||
            sv.start_ns >= *horizon)
            break;
        struct rs_key_step key;
        MDB_val k = {sizeof key, &key}, v;
        memcpy(&key, rank_key, RS_KEY_RANK_PREFIX); /* job_id, rank */
        rs__be64_put(key.step, num);
        if ((rc = rs__store_err(mdb_get(w->txn, w->store->stepsum, &k, &v))) == RS_E_NOT_FOUND) {
            *horizon = sv.start_ns;
            rc = 0;
            break;
        }
        if (rc != 0 || num == UINT64_MAX)
            break;
        num++;
    }
    mdb_cursor_close(c);
    return rc == RS_E_NOT_FOUND ? 0 : rc;
}

int
rs__rollup_horizon(rs_store_write *w, struct rs_store_rollup *ru, const MDB_val *k,
                   const MDB_val *v, uint64_t *raw, uint64_t *windows)
{
    struct rs_rank_value rv;
    uint64_t h = 0, from;
    bool idle;
    int rc;

    *raw = *windows = 0;
    if (v->mv_size != sizeof rv)
        return 0; /* the consistency check reports it; leave the rank alone */
    if ((rc = job_idle(w, ru, k->mv_data, &idle)) != 0)
        return rc;
    memcpy(&rv, v->mv_data, sizeof rv);
    if (idle)
        h = UINT64_MAX;
    else if (rv.last_ns > ru->raw_ns)
        h = rv.last_ns - ru->raw_ns;
    *windows = h;
    if ((rc = rs__store_oldest_raw(w->txn, w->store, k->mv_data, &from)) != 0)
        return rc;
    if (from == UINT64_MAX)
        return 0; /* nothing raw left */
    if ((rc = cap_at_unsummarized(w, k->mv_data, from, &h)) != 0)
        return rc;
    /* not aligned to a window: a window rolled up in parts merges (that costs a rewrite of its
     * entries per pass, and keeps an idle job's last window from staying raw) */
    *raw = h;
    return 0;
}
