/* Collective records of a time range without walking the job's history (see store.h
 * rs_store_collectives_scan_range): the colls database is ordered (job, comm, op, seq, rank), and
 * within one (comm, op) the instances start in sequence order, so a binary search on seq finds the
 * first instance of the range; the scan then stops at the first instance past it and jumps to the
 * next (comm, op). */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/error.h"

#include <string.h>

/* Positions c at the first key >= (job, comm, op, seq) and reads it. */
static int
seek(MDB_cursor *c, const uint8_t *job_id, const uint8_t *comm_op, uint64_t seq, MDB_val *k,
     MDB_val *v)
{
    struct rs_key_coll key;

    memcpy(key.job_id, job_id, 8);
    memcpy(key.comm_hash, comm_op, 9); /* comm_hash[8] and op[1] are adjacent */
    rs__be64_put(key.seq, seq);
    memset(key.rank, 0, sizeof key.rank);
    *k = (MDB_val){sizeof key, &key};
    int rc = mdb_cursor_get(c, k, v, MDB_SET_RANGE);
    if (rc == 0 && (k->mv_size != sizeof key || v->mv_size != sizeof(struct rs_coll_value)))
        return RS_E_CORRUPT;
    return rc;
}

/* Whether k is in (job, comm, op). */
static bool
in_group(const MDB_val *k, const uint8_t *job_id, const uint8_t *comm_op)
{
    const struct rs_key_coll *key = k->mv_data;
    return memcmp(key->job_id, job_id, 8) == 0 && memcmp(key->comm_hash, comm_op, 9) == 0;
}

static uint64_t
start_of(const MDB_val *v)
{
    struct rs_coll_value cv;
    memcpy(&cv, v->mv_data, sizeof cv);
    return cv.start_ns;
}

/* The first seq of the group whose first record starts at or after t (or past the group). */
static int
first_seq_at(MDB_cursor *c, const uint8_t *job_id, const uint8_t *comm_op, uint64_t lo, uint64_t hi,
             uint64_t t, uint64_t *out)
{
    MDB_val k, v;
    int rc;

    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if ((rc = seek(c, job_id, comm_op, mid, &k, &v)) != 0 && rc != MDB_NOTFOUND)
            return rc;
        if (rc == MDB_NOTFOUND || !in_group(&k, job_id, comm_op)) {
            hi = mid;
            continue;
        }
        uint64_t seq = rs__be64_get(((const struct rs_key_coll *)k.mv_data)->seq);
        if (start_of(&v) < t)
            lo = seq + 1;
        else
            hi = mid;
    }
    *out = lo;
    return 0;
}

int
rs_store_collectives_scan_range(rs_store_read *r, const char *job, uint64_t t0, uint64_t t1,
                                rs_store_collective_cb cb, void *arg)
{
    uint8_t job_id[8], comm_op[9];
    uint64_t from = t0 > RS_STORE_COLL_MARGIN_NS ? t0 - RS_STORE_COLL_MARGIN_NS : 0;
    uint64_t until = t1 + RS_STORE_COLL_MARGIN_NS < t1 ? UINT64_MAX : t1 + RS_STORE_COLL_MARGIN_NS;
    MDB_cursor *c;
    MDB_val k, v;
    int rc, cb_rc = 0;

    rs__be64_put(job_id, rs__store_job_id(job));
    memset(comm_op, 0, sizeof comm_op);
    if ((rc = mdb_cursor_open(r->txn, r->store->colls, &c)) != 0)
        return rs__store_err(rc);
    for (;;) {
        /* the next (comm, op) group of the job */
        if ((rc = seek(c, job_id, comm_op, 0, &k, &v)) != 0)
            break;
        const struct rs_key_coll *key = k.mv_data;
        if (memcmp(key->job_id, job_id, 8) != 0)
            break;
        memcpy(comm_op, key->comm_hash, 9);
        uint64_t seq0 = rs__be64_get(key->seq), start;
        if ((rc = first_seq_at(c, job_id, comm_op, seq0, UINT64_MAX, from, &start)) != 0)
            break;
        /* walk the group from there until an instance starts past the range */
        for (rc = seek(c, job_id, comm_op, start, &k, &v); rc == 0 && in_group(&k, job_id, comm_op);
             rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
            if (v.mv_size != sizeof(struct rs_coll_value) || k.mv_size != sizeof *key) {
                rc = RS_E_CORRUPT;
                goto out;
            }
            struct rs_coll_value cv;
            const struct rs_key_coll *ck = k.mv_data;
            memcpy(&cv, v.mv_data, sizeof cv);
            if (cv.start_ns >= until)
                break;
            struct rs_collective_record rec = {.start_ns = cv.start_ns,
                                               .end_ns = cv.end_ns,
                                               .bytes = cv.bytes,
                                               .comm_hash = rs__be64_get(ck->comm_hash),
                                               .seq = rs__be64_get(ck->seq),
                                               .op = ck->op[0],
                                               .stream = cv.stream,
                                               .seq_exact = cv.seq_exact != 0};
            if ((cb_rc = cb(arg, rs__be32_get(ck->rank), &rec)) != 0)
                goto out;
        }
        if (rc != 0 && rc != MDB_NOTFOUND)
            break;
        /* next group: (comm, op) + 1 as a 9-byte big-endian number */
        int i = 8;
        while (i >= 0 && ++comm_op[i] == 0)
            i--;
        if (i < 0) {
            rc = MDB_NOTFOUND;
            break;
        }
    }
out:
    mdb_cursor_close(c);
    if (cb_rc != 0)
        return cb_rc;
    return rc == MDB_NOTFOUND ? 0 : rc == RS_E_CORRUPT ? rc : rs__store_err(rc);
}
