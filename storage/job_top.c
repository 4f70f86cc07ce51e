/* A job's running totals (keys.h job_top): kept by the writer in the transaction of the records
 * and windows they total — the rank batches of ingest and the windows of rollups — and read by
 * whole-job answers (query/top_totals.c) instead of every record of the job, so that their cost
 * follows the job's size (kernel names, ranks), not its age. See store.h rs_store_job_totals. */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/array.h"
#include "common/error.h"
#include "common/span.h"
#include "proto/wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One batch's additions to a total, before they are merged into the store. */
struct delta {
    uint8_t tag;
    uint64_t id, count, ns;
};

struct deltas {
    struct delta *v;
    size_t n, cap;
};

static int
delta_add(struct deltas *d, uint8_t tag, uint64_t id, uint64_t count, uint64_t ns)
{
    if (RS_ARRAY_RESERVE(d->v, d->cap, d->n, 1) != 0)
        return -ENOMEM;
    d->v[d->n++] = (struct delta){tag, id, count, ns};
    return 0;
}

static int
by_tag_id(const void *x, const void *y)
{
    const struct delta *a = x, *b = y;
    if (a->tag != b->tag)
        return (a->tag > b->tag) - (a->tag < b->tag);
    return (a->id > b->id) - (a->id < b->id);
}

static void
jtop_key(struct rs_key_jtop *k, uint64_t job_id, uint8_t tag, uint64_t id)
{
    rs__be64_put(k->job_id, job_id);
    k->tag = tag;
    rs__be64_put(k->id, id);
}

/* The fixed-size value of k into out (zeroed when absent): rs__store_get_fixed. */
static int
get_value(MDB_txn *txn, const rs_store *s, const struct rs_key_jtop *k, void *out, size_t size)
{
    return rs__store_get_fixed(txn, s->jtop, k, sizeof *k, out, size);
}

static int
put_value(rs_store_write *w, const struct rs_key_jtop *k, const void *val, size_t size)
{
    MDB_val key = {sizeof *k, (void *)k}, v = {size, (void *)val};
    return rs__store_err(mdb_put(w->txn, w->store->jtop, &key, &v, 0));
}

/* Merges the sorted deltas, one get and one put per (tag, id). */
static int
merge_deltas(rs_store_write *w, uint64_t job_id, struct deltas *d)
{
    int rc = 0;

    if (d->n > 1)
        qsort(d->v, d->n, sizeof *d->v, by_tag_id);
    for (size_t i = 0; i < d->n && rc == 0;) {
        struct rs_key_jtop k;
        struct rs_jtop_sum_value sv = {0, 0};
        size_t j = i;
        jtop_key(&k, job_id, d->v[i].tag, d->v[i].id);
        rc = get_value(w->txn, w->store, &k, &sv, sizeof sv);
        if (rc != 0 && rc != RS_E_NOT_FOUND)
            break;
        for (; j < d->n && d->v[j].tag == d->v[i].tag && d->v[j].id == d->v[i].id; j++) {
            sv.count += d->v[j].count;
            sv.ns += d->v[j].ns;
        }
        rc = put_value(w, &k, &sv, sizeof sv);
        i = j;
    }
    return rc;
}

/* The job's totals entry: 0 (read), RS_E_NOT_FOUND (the job has no totals) or an error. */
static int
job_get(MDB_txn *txn, const rs_store *s, uint64_t job_id, struct rs_jtop_job_value *jv)
{
    struct rs_key_jtop k;
    int rc;

    jtop_key(&k, job_id, RS_JTOP_JOB, 0);
    rc = get_value(txn, s, &k, jv, sizeof *jv);
    if (rc == 0 && jv->version != RS_VALUE_VERSION)
        rc = RS_E_CORRUPT;
    return rc;
}

static int
by_start(const void *x, const void *y)
{
    const struct rs_memcpy_record *a = *(const struct rs_memcpy_record *const *)x;
    const struct rs_memcpy_record *b = *(const struct rs_memcpy_record *const *)y;
    return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

/* Profiles take a rank's launch-wait time as the union of its launch waits, which is their sum
 * while none begins before an earlier one ends. The rank's entry keeps the latest end; a launch
 * wait that begins before it (overlapping, or out of order) marks the rank, whose answers are
 * then scanned. */
static int
note_launch_waits(const struct rs_rank_batch *b, struct rs_jtop_rank_value *rv)
{
    const struct rs_memcpy_record **lw = NULL;
    size_t n = 0;

    for (uint32_t i = 0; i < b->n_memcpys; i++)
        if (b->memcpys[i].kind == RS_LAUNCH_WAIT) {
            if (!lw && !(lw = malloc(b->n_memcpys * sizeof *lw)))
                return -ENOMEM;
            lw[n++] = &b->memcpys[i];
        }
    if (n > 1)
        qsort(lw, n, sizeof *lw, by_start);
    for (size_t i = 0; i < n; i++) {
        if (lw[i]->start_ns < rv->lw_end)
            rv->flags |= RS_JTOP_RANK_LW_OVERLAP;
        if (lw[i]->end_ns > rv->lw_end)
            rv->lw_end = lw[i]->end_ns;
    }
    free(lw);
    return 0;
}

/* The batch's additions, with the expressions the profile applies to the records themselves
 * (query/profile.c), so that totals and scans add the same numbers. */
static int
batch_deltas(const struct rs_rank_batch *b, const uint64_t *hashes, struct deltas *d,
             struct rs_jtop_job_value *jv)
{
    int rc = 0;

    for (uint32_t i = 0; i < b->n_kernels && rc == 0; i++) {
        const struct rs_kernel_record *k = &b->kernels[i];
        rs_span_cover(&jv->t0, &jv->t1, k->start_ns, k->end_ns);
        rc = delta_add(d, RS_JTOP_KERNEL, hashes[k->name_id], 1, k->end_ns - k->start_ns);
    }
    for (uint32_t i = 0; i < b->n_kernel_totals && rc == 0; i++) {
        const struct rs_kernel_total *t = &b->kernel_totals[i];
        rs_span_cover(&jv->t0, &jv->t1, t->window_start_ns, t->window_start_ns + t->window_ns);
        jv->flags |= RS_JTOP_WINDOWS;
        rc = delta_add(d, RS_JTOP_KERNEL, hashes[t->name_id], t->count, t->total_ns);
    }
    for (uint32_t i = 0; i < b->n_collectives && rc == 0; i++) {
        const struct rs_collective_record *c = &b->collectives[i];
        rs_span_cover(&jv->t0, &jv->t1, c->start_ns, c->end_ns);
        rc = delta_add(d, RS_JTOP_COLL, (uint64_t)c->op, 1, c->end_ns - c->start_ns);
    }
    jv->collectives += b->n_collectives;
    for (uint32_t i = 0; i < b->n_memcpys && rc == 0; i++) {
        const struct rs_memcpy_record *m = &b->memcpys[i];
        rs_span_cover(&jv->t0, &jv->t1, m->start_ns, m->end_ns);
        if (m->kind == RS_LAUNCH_WAIT) /* time: the union (note_launch_waits) */
            rc = delta_add(d, RS_JTOP_SYNC, m->kind, 1,
                           m->end_ns > m->start_ns ? m->end_ns - m->start_ns : 0);
        else if (rs_copy_kind_is_host_side(m->kind))
            rc = delta_add(d, RS_JTOP_SYNC, m->kind, 1, m->end_ns - m->start_ns);
    }
    for (uint32_t i = 0; i < b->n_copy_totals && rc == 0; i++) {
        const struct rs_copy_total *t = &b->copy_totals[i];
        rs_span_cover(&jv->t0, &jv->t1, t->window_start_ns, t->window_start_ns + t->window_ns);
        if (rs_copy_kind_is_host_side(t->kind))
            rc = delta_add(d, RS_JTOP_SYNC, t->kind, t->count, t->total_ns);
    }
    for (uint32_t i = 0; i < b->n_stalls && rc == 0; i++)
        rc = delta_add(d, RS_JTOP_STALL, hashes[b->stalls[i].kernel_name_id], b->stalls[i].count,
                       0);
    return rc;
}

int
rs__jtop_rank_batch(rs_store_write *w, uint64_t job_id, const struct rs_rank_batch *b,
                    const uint64_t *hashes, bool job_existed, bool replaced_collective)
{
    rs_store *s = w->store;
    struct rs_jtop_job_value jv;
    struct rs_jtop_rank_value rv;
    struct rs_key_jtop jk, rk;
    struct deltas d = {NULL, 0, 0};
    int rc = job_get(w->txn, s, job_id, &jv);

    if (rc == RS_E_NOT_FOUND && job_existed)
        return 0; /* stored before totals were kept: its answers scan */
    if (rc == RS_E_NOT_FOUND)
        jv = (struct rs_jtop_job_value){RS_VALUE_VERSION, 0, 0, 0, 0};
    else if (rc != 0)
        return rc;
    jtop_key(&jk, job_id, RS_JTOP_JOB, 0);
    jtop_key(&rk, job_id, RS_JTOP_RANK, b->identity.rank);
    rc = get_value(w->txn, s, &rk, &rv, sizeof rv);
    if (rc != 0 && rc != RS_E_NOT_FOUND)
        return rc;
    rv.version = RS_VALUE_VERSION; /* (a new rank's entry: zeroed) */
    if (b->n_kernels || b->n_kernel_totals || b->n_collectives)
        rv.flags |= RS_JTOP_RANK_DATA;
    if (replaced_collective)
        jv.flags |= RS_JTOP_INEXACT;
    if ((rc = note_launch_waits(b, &rv)) == 0 && (rc = batch_deltas(b, hashes, &d, &jv)) == 0 &&
        (rc = merge_deltas(w, job_id, &d)) == 0 && (rc = put_value(w, &rk, &rv, sizeof rv)) == 0)
        rc = put_value(w, &jk, &jv, sizeof jv);
    free(d.v);
    return rc;
}

int
rs__jtop_windows(rs_store_write *w, const uint8_t *rank_key, bool kernels,
                 const struct rs__kwin_sums *sums)
{
    struct rs_jtop_job_value jv;
    struct rs_key_jtop jk;
    uint64_t job_id = rs__be64_get(rank_key);
    int rc = job_get(w->txn, w->store, job_id, &jv);

    if (rc != 0 || sums->n == 0)
        return rc == RS_E_NOT_FOUND ? 0 : rc;
    for (size_t i = 0; i < sums->n; i++)
        rs_span_cover(&jv.t0, &jv.t1, sums->v[i].window, sums->v[i].window + sums->v[i].window_ns);
    if (kernels)
        jv.flags |= RS_JTOP_WINDOWS;
    jtop_key(&jk, job_id, RS_JTOP_JOB, 0);
    return put_value(w, &jk, &jv, sizeof jv);
}

/* --- reading ---------------------------------------------------------------------------- */

struct read_ctx {
    rs_store_read *r;
    struct rs_store_job_totals *out;
    rs_store_total_cb cb;
    void *arg;
    struct rs__name_buf nb;
};

static int
visit(void *arg, const MDB_val *k, const MDB_val *v)
{
    struct read_ctx *x = arg;
    const struct rs_key_jtop *key = k->mv_data;
    struct rs_store_total t;
    int rc;

    if (k->mv_size != sizeof *key)
        return RS_E_CORRUPT;
    memset(&t, 0, sizeof t);
    t.id = rs__be64_get(key->id);
    switch (key->tag) {
    case RS_JTOP_JOB: {
        struct rs_jtop_job_value jv;
        if (v->mv_size != sizeof jv)
            return RS_E_CORRUPT;
        memcpy(&jv, v->mv_data, sizeof jv);
        if (jv.version != RS_VALUE_VERSION)
            return RS_E_CORRUPT;
        x->out->complete = !(jv.flags & RS_JTOP_INEXACT);
        x->out->kernel_windows = (jv.flags & RS_JTOP_WINDOWS) != 0;
        x->out->t0 = jv.t0;
        x->out->t1 = jv.t1;
        x->out->collectives = jv.collectives;
        return 0;
    }
    case RS_JTOP_RANK: {
        struct rs_jtop_rank_value rv;
        if (v->mv_size != sizeof rv || t.id > UINT32_MAX)
            return RS_E_CORRUPT;
        memcpy(&rv, v->mv_data, sizeof rv);
        t.kind = RS_STORE_TOTAL_RANK;
        t.has_data = (rv.flags & RS_JTOP_RANK_DATA) != 0;
        t.launch_waits_overlap = (rv.flags & RS_JTOP_RANK_LW_OVERLAP) != 0;
        break;
    }
    case RS_JTOP_KERNEL:
    case RS_JTOP_STALL:
    case RS_JTOP_COLL:
    case RS_JTOP_SYNC: {
        struct rs_jtop_sum_value sv;
        if (v->mv_size != sizeof sv)
            return RS_E_CORRUPT;
        memcpy(&sv, v->mv_data, sizeof sv);
        t.count = sv.count;
        t.ns = sv.ns;
        t.kind = key->tag == RS_JTOP_KERNEL  ? RS_STORE_TOTAL_KERNEL
                 : key->tag == RS_JTOP_STALL ? RS_STORE_TOTAL_STALLS
                 : key->tag == RS_JTOP_COLL  ? RS_STORE_TOTAL_COLLECTIVE
                                             : RS_STORE_TOTAL_SYNC;
        if ((key->tag == RS_JTOP_COLL && t.id >= RS_COLL_OP_COUNT) ||
            (key->tag == RS_JTOP_SYNC && t.id >= RS_COPY_KIND_COUNT))
            return RS_E_CORRUPT;
        if (key->tag == RS_JTOP_KERNEL || key->tag == RS_JTOP_STALL) {
            if ((rc = rs__store_resolve_name(x->r, &x->nb, t.id)) != 0)
                return rc;
            t.name = x->nb.s;
        }
        break;
    }
    default:
        return RS_E_CORRUPT;
    }
    return x->cb(x->arg, &t);
}

int
rs_store_job_totals(rs_store_read *r, const char *job, struct rs_store_job_totals *out,
                    rs_store_total_cb cb, void *arg)
{
    struct rs_store_job_totals o;
    struct read_ctx x = {r, &o, cb, arg, {NULL, 0}};
    uint8_t prefix[RS_KEY_JOB_PREFIX];
    struct rs_jtop_job_value jv;
    uint64_t job_id;
    int rc;

    memset(&o, 0, sizeof o);
    if ((rc = rs__store_job_key(r->txn, r->store, job, &job_id)) != 0)
        return rc;
    rc = job_get(r->txn, r->store, job_id, &jv);
    if (rc == RS_E_NOT_FOUND) {
        *out = o; /* no totals: has_totals false */
        return 0;
    }
    if (rc != 0)
        return rc;
    o.has_totals = true;
    rs__be64_put(prefix, job_id);
    rc = rs__store_prefix_scan(r, r->store->jtop, prefix, sizeof prefix, prefix, sizeof prefix,
                               visit, &x);
    free(x.nb.s);
    if (rc == 0)
        *out = o;
    return rc;
}
