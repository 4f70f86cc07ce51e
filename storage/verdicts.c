/* The straggler verdict history in the store (keys.h verdicts): what the server's continuous
 * evaluation found, one entry per time a rank became a straggler until it was cleared, so that
 * the fleet view ("slow in 4 of its last 5 jobs") survives a restart. The evaluator keeps the
 * same history in memory for the stragglers answer; this is the lasting copy, written through
 * the writer (server/evaluator.c). */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/error.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* The newest entry of the rank whose key `past` is (job, rank, UINT64_MAX): 0 with *k, *v set
 * and the cursor on it, RS_E_NOT_FOUND or a storage error. */
static int
newest(MDB_cursor *c, const struct rs_key_verdict *past, MDB_val *k, MDB_val *v)
{
    *k = (MDB_val){sizeof *past, (void *)past};
    int rc = mdb_cursor_get(c, k, v, MDB_SET_RANGE);

    if (rc == 0 && k->mv_size == sizeof *past && memcmp(k->mv_data, past, sizeof *past) == 0)
        return 0; /* detected at UINT64_MAX itself */
    if (rc != 0 && rc != MDB_NOTFOUND)
        return rs__store_err(rc);
    rc = mdb_cursor_get(c, k, v, rc == 0 ? MDB_PREV : MDB_LAST);
    if (rc == 0 &&
        (k->mv_size != sizeof *past || memcmp(k->mv_data, past, RS_KEY_RANK_PREFIX) != 0))
        return RS_E_NOT_FOUND; /* another rank's or job's */
    return rs__store_err(rc);
}

/* Deletes the oldest entries of the rank that `of_rank` names (its job id and rank) until fewer
 * than RS_VERDICTS_PER_RANK are left. */
static int
make_room(MDB_cursor *c, const struct rs_key_verdict *of_rank)
{
    struct rs_key_verdict first = *of_rank, *rank_key = &first;
    MDB_val k, v;
    size_t n = 0;
    int rc;

    rs__be64_put(first.detected_ns, 0);
    k = (MDB_val){sizeof *rank_key, (void *)rank_key};
    for (rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        if (k.mv_size < RS_KEY_RANK_PREFIX || memcmp(k.mv_data, rank_key, RS_KEY_RANK_PREFIX) != 0)
            break;
        n++;
    }
    if (rc != 0 && rc != MDB_NOTFOUND)
        return rs__store_err(rc);
    for (; n >= RS_VERDICTS_PER_RANK; n--) { /* from the front, seeking again after each delete */
        k = (MDB_val){sizeof *rank_key, (void *)rank_key};
        if ((rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE)) != 0 ||
            (rc = mdb_cursor_del(c, 0)) != 0)
            return rs__store_err(rc);
    }
    return 0;
}

int
rs_store_verdict_note(rs_store_write *w, const char *job, uint32_t rank, bool active,
                      double slowdown, uint64_t now_ns)
{
    struct rs_key_verdict key;
    struct rs_verdict_value vv;
    MDB_cursor *c;
    MDB_val k, v;
    uint64_t id;
    int rc;

    if (active && !(isfinite(slowdown) && slowdown > 0))
        return -EINVAL;
    if ((rc = rs__store_job_key(w->txn, w->store, job, &id)) != 0)
        return rc;
    rs__be64_put(key.job_id, id);
    rs__be32_put(key.rank, rank);
    rs__be64_put(key.detected_ns, UINT64_MAX);
    if ((rc = mdb_cursor_open(w->txn, w->store->verdicts, &c)) != 0)
        return rs__store_err(rc);
    rc = newest(c, &key, &k, &v);
    bool open = rc == 0 && v.mv_size == sizeof vv &&
                (memcpy(&vv, v.mv_data, sizeof vv), vv.cleared_ns == 0);
    if (rc != 0 && rc != RS_E_NOT_FOUND)
        goto out;
    rc = 0;
    if (open) {
        /* the verdict goes on (a later evaluation, or the first one after a restart: the same
         * episode, not a new one) or ends */
        struct rs_key_verdict at;
        memcpy(&at, k.mv_data, sizeof at);
        if (active)
            vv.slowdown = slowdown;
        else
            vv.cleared_ns =
                now_ns > rs__be64_get(at.detected_ns) ? now_ns : rs__be64_get(at.detected_ns);
        k = (MDB_val){sizeof at, &at};
        v = (MDB_val){sizeof vv, &vv};
        rc = rs__store_err(mdb_put(w->txn, w->store->verdicts, &k, &v, 0));
    } else if (active) {
        if ((rc = make_room(c, &key)) != 0)
            goto out;
        rs__be64_put(key.detected_ns, now_ns);
        vv = (struct rs_verdict_value){RS_VALUE_VERSION, 0, 0, slowdown};
        k = (MDB_val){sizeof key, &key};
        v = (MDB_val){sizeof vv, &vv};
        rc = rs__store_err(mdb_put(w->txn, w->store->verdicts, &k, &v, 0));
    }
out:
    mdb_cursor_close(c);
    return rc;
}

struct verdicts_ctx {
    rs_store_verdict_cb cb;
    void *arg;
};

static int
visit_verdict(void *p, const MDB_val *k, const MDB_val *v)
{
    const struct verdicts_ctx *ctx = p;
    const struct rs_key_verdict *key = k->mv_data;
    struct rs_verdict_value vv;

    if (k->mv_size != sizeof *key || v->mv_size != sizeof vv)
        return RS_E_CORRUPT;
    memcpy(&vv, v->mv_data, sizeof vv);
    struct rs_store_verdict out = {rs__be32_get(key->rank), rs__be64_get(key->detected_ns),
                                   vv.cleared_ns, vv.slowdown};
    return ctx->cb(ctx->arg, &out);
}

int
rs_store_verdicts_scan(rs_store_read *r, const char *job, rs_store_verdict_cb cb, void *arg)
{
    struct verdicts_ctx ctx = {cb, arg};
    uint8_t prefix[RS_KEY_JOB_PREFIX];
    uint64_t id;
    int rc;

    if ((rc = rs__store_job_key(r->txn, r->store, job, &id)) != 0)
        return rc == RS_E_NOT_FOUND ? 0 : rc; /* an unknown job has no verdicts */
    rs__be64_put(prefix, id);
    return rs__store_prefix_scan(r, r->store->verdicts, prefix, sizeof prefix, prefix,
                                 sizeof prefix, visit_verdict, &ctx);
}
