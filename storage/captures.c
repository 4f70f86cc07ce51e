/* Captures on demand in the store (keys.h captures): the server's capture table (server/
 * captures.h) written through the writer as it changes, and read back whole at start, so that
 * GET /v1/jobs/{job}/captures survives a restart. */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The key of capture `id` of the job whose id is job_id. */
static void
key_of(struct rs_key_capture *k, uint64_t job_id, uint64_t id)
{
    rs__be64_put(k->job_id, job_id);
    rs__be64_put(k->id, id);
}

int
rs_store_capture_put(rs_store_write *w, const char *job, const struct rs_store_capture *c)
{
    struct rs_key_capture key;
    struct rs_capture_value cv = {0};
    uint64_t job_id;
    int rc;

    if (c->id == 0)
        return -EINVAL;
    if ((rc = rs__store_job_key(w->txn, w->store, job, &job_id)) != 0)
        return rc;
    key_of(&key, job_id, c->id);
    cv = (struct rs_capture_value){RS_VALUE_VERSION, c->rank,         c->kinds,
                                   c->seconds,       c->state,        c->ran_kinds,
                                   c->requested_ns,  c->delivered_ns, c->started_ns,
                                   c->ended_ns,      c->batches,      c->kernels,
                                   c->stalls,        "",              "",
                                   ""};
    snprintf(cv.who, sizeof cv.who, "%s", c->who);
    snprintf(cv.reason, sizeof cv.reason, "%s", c->reason);
    snprintf(cv.message, sizeof cv.message, "%s", c->message);
    MDB_val k = {sizeof key, &key}, v = {sizeof cv, &cv};
    return rs__store_err(mdb_put(w->txn, w->store->captures, &k, &v, 0));
}

int
rs_store_capture_delete(rs_store_write *w, const char *job, uint64_t id)
{
    struct rs_key_capture key;
    uint64_t job_id;
    int rc;

    if ((rc = rs__store_job_key(w->txn, w->store, job, &job_id)) != 0)
        return rc == RS_E_NOT_FOUND ? 0 : rc;
    key_of(&key, job_id, id);
    MDB_val k = {sizeof key, &key};
    rc = rs__store_err(mdb_del(w->txn, w->store->captures, &k, NULL));
    return rc == RS_E_NOT_FOUND ? 0 : rc;
}

/* A stored value back as the server's capture; false when it is not one (size, version, or a
 * string without its NUL). */
bool
rs__store_capture_value_read(const MDB_val *k, const MDB_val *v, struct rs_store_capture *out)
{
    const struct rs_key_capture *key = k->mv_data;
    struct rs_capture_value cv;

    if (k->mv_size != sizeof *key || v->mv_size != sizeof cv)
        return false;
    memcpy(&cv, v->mv_data, sizeof cv);
    if (cv.version != RS_VALUE_VERSION || !memchr(cv.who, 0, sizeof cv.who) ||
        !memchr(cv.reason, 0, sizeof cv.reason) || !memchr(cv.message, 0, sizeof cv.message) ||
        rs__be64_get(key->id) == 0)
        return false;
    *out = (struct rs_store_capture){rs__be64_get(key->id), cv.rank,         cv.kinds,
                                     cv.seconds,            cv.state,        cv.ran_kinds,
                                     cv.requested_ns,       cv.delivered_ns, cv.started_ns,
                                     cv.ended_ns,           cv.batches,      cv.kernels,
                                     cv.stalls,             "",              "",
                                     ""};
    memcpy(out->who, cv.who, sizeof out->who);
    memcpy(out->reason, cv.reason, sizeof out->reason);
    memcpy(out->message, cv.message, sizeof out->message);
    return true;
}

int
rs_store_captures_scan(rs_store_read *r, rs_store_capture_cb cb, void *arg)
{
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    uint8_t named[RS_KEY_JOB_PREFIX] = {0};
    bool have_name = false;
    MDB_cursor *c;
    MDB_val k, v;
    int rc = mdb_cursor_open(r->txn, r->store->captures, &c);

    if (rc != 0)
        return rs__store_err(rc);
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        struct rs_store_capture cap;
        if (!rs__store_capture_value_read(&k, &v, &cap)) {
            rc = RS_E_CORRUPT;
            goto out;
        }
        if (!have_name || memcmp(named, k.mv_data, sizeof named) != 0) { /* a job's first */
            MDB_val ik = {sizeof named, named}, name;
            memcpy(named, k.mv_data, sizeof named);
            if ((rc = mdb_get(r->txn, r->store->job_ids, &ik, &name)) != 0 || name.mv_size == 0 ||
                name.mv_size > RS_WIRE_MAX_JOB_LEN) {
                rc = rc == MDB_NOTFOUND || rc == 0 ? RS_E_CORRUPT : rs__store_err(rc);
                goto out;
            }
            memcpy(job, name.mv_data, name.mv_size);
            job[name.mv_size] = '\0';
            have_name = true;
        }
        if ((rc = cb(arg, job, &cap)) != 0)
            goto out;
    }
    rc = rc == MDB_NOTFOUND ? 0 : rs__store_err(rc);
out:
    mdb_cursor_close(c);
    return rc;
}
