/* The hang history in the store (keys.h hangs): the NCCL hangs the server's hang watch raised,
 * each with when it cleared, so that the hangs view's history survives a restart. The watch keeps
 * the newest in memory for the hangs answer; this is the lasting copy, written through the writer
 * (server/hang_watch.c). */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/error.h"

#include <errno.h>
#include <string.h>

/* Deletes the job's oldest hangs (the cursor's database; `job_id` its prefix) until fewer than
 * RS_HANGS_PER_JOB are left. */
static int
make_room(MDB_cursor *c, const uint8_t *job_id)
{
    MDB_val k = {RS_KEY_JOB_PREFIX, (void *)job_id}, v;
    size_t n = 0;
    int rc;

    for (rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        if (k.mv_size < RS_KEY_JOB_PREFIX || memcmp(k.mv_data, job_id, RS_KEY_JOB_PREFIX) != 0)
            break;
        n++;
    }
    if (rc != 0 && rc != MDB_NOTFOUND)
        return rs__store_err(rc);
    for (; n >= RS_HANGS_PER_JOB; n--) { /* from the front, seeking again after each delete */
        k = (MDB_val){RS_KEY_JOB_PREFIX, (void *)job_id};
        if ((rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE)) != 0 ||
            (rc = mdb_cursor_del(c, 0)) != 0)
            return rs__store_err(rc);
    }
    return 0;
}

int
rs_store_hang_put(rs_store_write *w, const char *job, const struct rs_store_hang *h)
{
    struct rs_key_hang key;
    struct rs_hang_value hv = {.version = RS_VALUE_VERSION};
    MDB_cursor *c;
    MDB_val k, v;
    uint64_t id;
    int rc;

    if (memchr(h->op, 0, sizeof h->op) == NULL || (h->cleared_ns && h->cleared_ns < h->raised_ns))
        return -EINVAL;
    if ((rc = rs__store_job_key(w->txn, w->store, job, &id)) != 0)
        return rc;
    rs__be64_put(key.job_id, id);
    rs__be64_put(key.raised_ns, h->raised_ns);
    rs__be64_put(key.comm, h->comm);
    rs__be64_put(key.seq, h->seq);
    hv.comm_size = h->comm_size;
    hv.since_ns = h->since_ns;
    hv.cleared_ns = h->cleared_ns;
    hv.n_waiting = h->n_waiting;
    hv.n_absent = h->n_absent;
    memcpy(hv.op, h->op, sizeof hv.op);
    for (uint32_t i = 0; i < h->n_absent && i < RS_STORE_HANG_RANKS; i++)
        hv.absent[i] = h->absent[i];
    if ((rc = mdb_cursor_open(w->txn, w->store->hangs, &c)) != 0)
        return rs__store_err(rc);
    k = (MDB_val){sizeof key, &key};
    rc = mdb_cursor_get(c, &k, &v, MDB_SET); /* an update keeps its place; a new one needs room */
    if (rc == MDB_NOTFOUND)
        rc = make_room(c, key.job_id);
    else
        rc = rs__store_err(rc);
    if (rc == 0) {
        k = (MDB_val){sizeof key, &key};
        v = (MDB_val){sizeof hv, &hv};
        rc = rs__store_err(mdb_put(w->txn, w->store->hangs, &k, &v, 0));
    }
    mdb_cursor_close(c);
    return rc;
}

struct hangs_ctx {
    rs_store_hang_cb cb;
    void *arg;
};

static int
visit_hang(void *p, const MDB_val *k, const MDB_val *v)
{
    const struct hangs_ctx *ctx = p;
    const struct rs_key_hang *key = k->mv_data;
    struct rs_hang_value hv;
    struct rs_store_hang out;

    if (k->mv_size != sizeof *key || v->mv_size != sizeof hv)
        return RS_E_CORRUPT;
    memcpy(&hv, v->mv_data, sizeof hv);
    if (memchr(hv.op, 0, sizeof hv.op) == NULL)
        return RS_E_CORRUPT;
    out = (struct rs_store_hang){.comm = rs__be64_get(key->comm),
                                 .seq = rs__be64_get(key->seq),
                                 .since_ns = hv.since_ns,
                                 .raised_ns = rs__be64_get(key->raised_ns),
                                 .cleared_ns = hv.cleared_ns};
    memcpy(out.op, hv.op, sizeof out.op);
    out.comm_size = hv.comm_size;
    out.n_waiting = hv.n_waiting;
    out.n_absent = hv.n_absent;
    memcpy(out.absent, hv.absent, sizeof out.absent);
    return ctx->cb(ctx->arg, &out);
}

int
rs_store_hangs_scan(rs_store_read *r, const char *job, rs_store_hang_cb cb, void *arg)
{
    struct hangs_ctx ctx = {cb, arg};
    uint8_t prefix[RS_KEY_JOB_PREFIX];
    uint64_t id;
    int rc;

    if ((rc = rs__store_job_key(r->txn, r->store, job, &id)) != 0)
        return rc == RS_E_NOT_FOUND ? 0 : rc; /* an unknown job has no hangs */
    rs__be64_put(prefix, id);
    return rs__store_prefix_scan(r, r->store->hangs, prefix, sizeof prefix, prefix, sizeof prefix,
                                 visit_hang, &ctx);
}
