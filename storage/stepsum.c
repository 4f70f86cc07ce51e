/* Step summaries: derived per-step metrics stored once a step is settled, and step lookups that
 * read only the newest steps (see store.h). */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/error.h"

#include <string.h>

int
rs_store_step_summaries_put(rs_store_write *w, const char *job, uint32_t rank,
                            const struct rs_step_summary *v, size_t n)
{
    MDB_val jk = {strlen(job), (void *)job}, jv;
    uint64_t job_id;
    int rc;

    if (jk.mv_size == 0 || jk.mv_size > RS_WIRE_MAX_JOB_LEN)
        return RS_E_NOT_FOUND;
    if ((rc = mdb_get(w->txn, w->store->jobs, &jk, &jv)) != 0) /* no orphans of a deleted job */
        return rs__store_err(rc);
    if ((rc = rs__store_job_key(w->txn, w->store, job, &job_id)) != 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        struct rs_key_step key;
        struct rs_stepsum_value sv = {RS_VALUE_VERSION,     v[i].kernels,       v[i].start_ns,
                                      v[i].end_ns,          v[i].compute_ns,    v[i].comm_ns,
                                      v[i].exposed_comm_ns, v[i].idle_ns,       v[i].host_gap_ns,
                                      v[i].instances,       v[i].last_arrivals, v[i].peer_wait_ns};
        MDB_val k = {sizeof key, &key}, val = {sizeof sv, &sv};
        rs__be64_put(key.job_id, job_id);
        rs__be32_put(key.rank, rank);
        rs__be64_put(key.step, v[i].step);
        if ((rc = mdb_put(w->txn, w->store->stepsum, &k, &val, 0)) != 0)
            return rs__store_err(rc);
    }
    return 0;
}

struct summaries_ctx {
    rs_store_step_summary_cb cb;
    void *arg;
};

static int
visit_summary(void *p, const MDB_val *k, const MDB_val *v)
{
    struct summaries_ctx *ctx = p;
    const struct rs_key_step *key = k->mv_data;
    struct rs_stepsum_value sv;

    if (k->mv_size != sizeof *key || v->mv_size != sizeof sv)
        return RS_E_CORRUPT;
    memcpy(&sv, v->mv_data, sizeof sv);
    if (sv.version != RS_VALUE_VERSION || sv.end_ns < sv.start_ns)
        return RS_E_CORRUPT;
    struct rs_step_summary s = {
        rs__be64_get(key->step), sv.start_ns, sv.end_ns,          sv.end_ns - sv.start_ns,
        sv.compute_ns,           sv.comm_ns,  sv.exposed_comm_ns, sv.idle_ns,
        sv.host_gap_ns,          sv.kernels,  sv.instances,       sv.last_arrivals,
        sv.peer_wait_ns};
    return ctx->cb(ctx->arg, &s);
}

int
rs_store_step_summaries_scan(rs_store_read *r, const char *job, uint32_t rank, uint64_t from_step,
                             rs_store_step_summary_cb cb, void *arg)
{
    struct summaries_ctx ctx = {cb, arg};
    struct rs_key_step from;
    uint64_t id;
    int rc;

    if ((rc = rs__store_job_key(r->txn, r->store, job, &id)) != 0)
        return rc == RS_E_NOT_FOUND ? 0 : rc; /* an unknown job has no summaries */
    rs__be64_put(from.job_id, id);
    rs__be32_put(from.rank, rank);
    rs__be64_put(from.step, from_step);
    return rs__store_prefix_scan(r, r->store->stepsum, &from, RS_KEY_RANK_PREFIX, &from,
                                 sizeof from, visit_summary, &ctx);
}

int
rs_store_last_step(rs_store_read *r, const char *job, uint32_t rank, uint64_t *out)
{
    struct rs_key_step past; /* (job, rank, UINT64_MAX): at or after the rank's last step */
    MDB_cursor *c;
    MDB_val k = {sizeof past, &past}, v;
    uint64_t id;
    int rc;

    if ((rc = rs__store_job_key(r->txn, r->store, job, &id)) != 0)
        return rc;
    rs__be64_put(past.job_id, id);
    rs__be32_put(past.rank, rank);
    rs__be64_put(past.step, UINT64_MAX);
    if ((rc = mdb_cursor_open(r->txn, r->store->steps, &c)) != 0)
        return rs__store_err(rc);
    rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
    if (rc == 0 && k.mv_size == sizeof past && memcmp(k.mv_data, &past, sizeof past) == 0) {
        *out = UINT64_MAX; /* step UINT64_MAX itself */
        goto out;
    }
    rc = mdb_cursor_get(c, &k, &v, rc == 0 ? MDB_PREV : MDB_LAST);
    if (rc == 0 && (k.mv_size != sizeof past || memcmp(k.mv_data, &past, RS_KEY_RANK_PREFIX) != 0))
        rc = MDB_NOTFOUND; /* the entry before belongs to another rank or job */
    if (rc == 0)
        *out = rs__be64_get(((const struct rs_key_step *)k.mv_data)->step);
out:
    mdb_cursor_close(c);
    return rs__store_err(rc);
}
