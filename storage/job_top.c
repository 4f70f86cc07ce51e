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

/* The totals a write transaction changes, kept in memory until it commits
 * (rs__jtop_flush): a group commit of many rank batches of a job merges each kernel's total
 * once, not once per rank batch — at 60 kernel names per rank batch the merges per batch took
 * about a quarter of the writer's time. */
struct delta { /* an addition to a total */
    uint64_t job_id;
    uint8_t tag;
    uint64_t id, count, ns;
};

struct pending_job { /* a job's entry as the transaction leaves it */
    uint64_t job_id;
    bool totals; /* false: the job has none (stored before they were kept) */
    struct rs_jtop_job_value jv;
};

struct rs__jtop_pending {
    struct delta *v; /* one per (job, tag, id): additions are summed as they come */
    size_t n, cap;
    uint32_t *slots; /* open addressing into v (position + 1; 0 = empty), at most half full */
    size_t n_slots;
    struct pending_job *jobs;
    size_t n_jobs, cap_jobs;
};

static size_t
delta_slot(uint64_t job_id, uint8_t tag, uint64_t id, size_t n_slots)
{
    uint64_t h = (job_id ^ (id * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)tag << 56)) *
                 0xff51afd7ed558ccdull;
    return (size_t)(h >> 32) & (n_slots - 1);
}

/* Room for one more distinct total: the table doubled (and filled again) when half full. */
static int
delta_room(struct rs__jtop_pending *d)
{
    if (2 * (d->n + 1) <= d->n_slots)
        return RS_ARRAY_RESERVE(d->v, d->cap, d->n, 1);
    size_t n_slots = d->n_slots ? 2 * d->n_slots : 256;
    uint32_t *slots = calloc(n_slots, sizeof *slots);
    if (!slots)
        return -ENOMEM;
    for (size_t i = 0; i < d->n; i++) {
        size_t s = delta_slot(d->v[i].job_id, d->v[i].tag, d->v[i].id, n_slots);
        while (slots[s])
            s = (s + 1) & (n_slots - 1);
        slots[s] = (uint32_t)i + 1;
    }
    free(d->slots);
    d->slots = slots;
    d->n_slots = n_slots;
    return RS_ARRAY_RESERVE(d->v, d->cap, d->n, 1);
}

static int
delta_add(struct rs__jtop_pending *d, uint64_t job_id, uint8_t tag, uint64_t id, uint64_t count,
          uint64_t ns)
{
    size_t s;

    if (d->n_slots)
        for (s = delta_slot(job_id, tag, id, d->n_slots); d->slots[s];
             s = (s + 1) & (d->n_slots - 1)) {
            struct delta *x = &d->v[d->slots[s] - 1];
            if (x->job_id == job_id && x->tag == tag && x->id == id) {
                x->count += count;
                x->ns += ns;
                return 0;
            }
        }
    if (delta_room(d) != 0)
        return -ENOMEM;
    for (s = delta_slot(job_id, tag, id, d->n_slots); d->slots[s]; s = (s + 1) & (d->n_slots - 1))
        ;
    d->v[d->n] = (struct delta){job_id, tag, id, count, ns};
    d->slots[s] = (uint32_t)++d->n;
    return 0;
}

static int
by_tag_id(const void *x, const void *y)
{
    const struct delta *a = x, *b = y;
    if (a->job_id != b->job_id)
        return (a->job_id > b->job_id) - (a->job_id < b->job_id);
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

/* Merges the deltas, one get and one put per (job, tag, id). */
static int
merge_deltas(rs_store_write *w, struct rs__jtop_pending *d)
{
    int rc = 0;

    if (d->n > 1)
        qsort(d->v, d->n, sizeof *d->v, by_tag_id);
    for (size_t i = 0; i < d->n && rc == 0;) {
        struct rs_key_jtop k;
        struct rs_jtop_sum_value sv = {0, 0};
        size_t j = i;
        jtop_key(&k, d->v[i].job_id, d->v[i].tag, d->v[i].id);
        rc = get_value(w->txn, w->store, &k, &sv, sizeof sv);
        if (rc != 0 && rc != RS_E_NOT_FOUND)
            break;
        for (; j < d->n && d->v[j].job_id == d->v[i].job_id && d->v[j].tag == d->v[i].tag &&
               d->v[j].id == d->v[i].id;
             j++) {
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

/* The transaction's entry of job_id (read from the store at its first use): 0 with *out set, or
 * an error. A job without a stored entry gets totals only when !job_existed (a job the writer
 * creates now). */
static int
pending_job(rs_store_write *w, uint64_t job_id, bool job_existed, struct pending_job **out)
{
    struct rs__jtop_pending *p = w->jtop;
    int rc;

    if (!p && !(p = w->jtop = calloc(1, sizeof *p)))
        return -ENOMEM;
    for (size_t i = 0; i < p->n_jobs; i++)
        if (p->jobs[i].job_id == job_id) {
            *out = &p->jobs[i];
            return 0;
        }
    if (RS_ARRAY_RESERVE(p->jobs, p->cap_jobs, p->n_jobs, 1) != 0)
        return -ENOMEM;
    struct pending_job *j = &p->jobs[p->n_jobs];
    j->job_id = job_id;
    rc = job_get(w->txn, w->store, job_id, &j->jv);
    if (rc != 0 && rc != RS_E_NOT_FOUND)
        return rc;
    j->totals = rc == 0 || !job_existed;
    j->jv.version = RS_VALUE_VERSION;
    p->n_jobs++;
    *out = j;
    return 0;
}

int
rs__jtop_flush(rs_store_write *w)
{
    struct rs__jtop_pending *p = w->jtop;
    int rc = 0;

    if (!p)
        return 0;
    rc = merge_deltas(w, p);
    for (size_t i = 0; rc == 0 && i < p->n_jobs; i++) {
        struct rs_key_jtop k;
        if (!p->jobs[i].totals)
            continue;
        jtop_key(&k, p->jobs[i].job_id, RS_JTOP_JOB, 0);
        rc = put_value(w, &k, &p->jobs[i].jv, sizeof p->jobs[i].jv);
    }
    rs__jtop_forget(w);
    return rc;
}

void
rs__jtop_forget(rs_store_write *w)
{
    if (w->jtop) {
        free(w->jtop->v);
        free(w->jtop->slots);
        free(w->jtop->jobs);
        free(w->jtop);
        w->jtop = NULL;
    }
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
batch_deltas(const struct rs_rank_batch *b, const uint64_t *hashes, struct rs__jtop_pending *d,
             uint64_t job, struct rs_jtop_job_value *jv)
{
    int rc = 0;

    for (uint32_t i = 0; i < b->n_kernels && rc == 0; i++) {
        const struct rs_kernel_record *k = &b->kernels[i];
        rs_span_cover(&jv->t0, &jv->t1, k->start_ns, k->end_ns);
        rc = delta_add(d, job, RS_JTOP_KERNEL, hashes[k->name_id], 1, k->end_ns - k->start_ns);
    }
    for (uint32_t i = 0; i < b->n_kernel_totals && rc == 0; i++) {
        const struct rs_kernel_total *t = &b->kernel_totals[i];
        rs_span_cover(&jv->t0, &jv->t1, t->window_start_ns, t->window_start_ns + t->window_ns);
        jv->flags |= RS_JTOP_WINDOWS;
        rc = delta_add(d, job, RS_JTOP_KERNEL, hashes[t->name_id], t->count, t->total_ns);
    }
    for (uint32_t i = 0; i < b->n_collectives && rc == 0; i++) {
        const struct rs_collective_record *c = &b->collectives[i];
        rs_span_cover(&jv->t0, &jv->t1, c->start_ns, c->end_ns);
        rc = delta_add(d, job, RS_JTOP_COLL, (uint64_t)c->op, 1, c->end_ns - c->start_ns);
    }
    jv->collectives += b->n_collectives;
    for (uint32_t i = 0; i < b->n_memcpys && rc == 0; i++) {
        const struct rs_memcpy_record *m = &b->memcpys[i];
        rs_span_cover(&jv->t0, &jv->t1, m->start_ns, m->end_ns);
        if (m->kind == RS_LAUNCH_WAIT) /* time: the union (note_launch_waits) */
            rc = delta_add(d, job, RS_JTOP_SYNC, m->kind, 1,
                           m->end_ns > m->start_ns ? m->end_ns - m->start_ns : 0);
        else if (rs_copy_kind_is_host_side(m->kind))
            rc = delta_add(d, job, RS_JTOP_SYNC, m->kind, 1, m->end_ns - m->start_ns);
    }
    for (uint32_t i = 0; i < b->n_copy_totals && rc == 0; i++) {
        const struct rs_copy_total *t = &b->copy_totals[i];
        rs_span_cover(&jv->t0, &jv->t1, t->window_start_ns, t->window_start_ns + t->window_ns);
        if (rs_copy_kind_is_host_side(t->kind))
            rc = delta_add(d, job, RS_JTOP_SYNC, t->kind, t->count, t->total_ns);
    }
    for (uint32_t i = 0; i < b->n_stalls && rc == 0; i++)
        rc = delta_add(d, job, RS_JTOP_STALL, hashes[b->stalls[i].kernel_name_id], b->stalls[i].count,
                       0);
    return rc;
}

int
rs__jtop_rank_batch(rs_store_write *w, uint64_t job_id, const struct rs_rank_batch *b,
                    const uint64_t *hashes, bool job_existed, bool replaced_collective)
{
    struct pending_job *j;
    struct rs_jtop_rank_value rv;
    struct rs_key_jtop rk;
    int rc = pending_job(w, job_id, job_existed, &j);

    if (rc != 0 || !j->totals)
        return rc; /* (a job stored before totals were kept: its answers scan) */
    jtop_key(&rk, job_id, RS_JTOP_RANK, b->identity.rank);
    rc = get_value(w->txn, w->store, &rk, &rv, sizeof rv);
    if (rc != 0 && rc != RS_E_NOT_FOUND)
        return rc;
    rv.version = RS_VALUE_VERSION; /* (a new rank's entry: zeroed) */
    if (b->n_kernels || b->n_kernel_totals || b->n_collectives)
        rv.flags |= RS_JTOP_RANK_DATA;
    if (replaced_collective)
        j->jv.flags |= RS_JTOP_INEXACT;
    if ((rc = note_launch_waits(b, &rv)) == 0 &&
        (rc = batch_deltas(b, hashes, w->jtop, job_id, &j->jv)) == 0)
        rc = put_value(w, &rk, &rv, sizeof rv);
    return rc;
}

int
rs__jtop_windows(rs_store_write *w, const uint8_t *rank_key, bool kernels,
                 const struct rs__kwin_sums *sums)
{
    struct pending_job *j;
    int rc;

    if (sums->n == 0)
        return 0;
    /* (a rollup reaches only stored jobs: job_existed) */
    if ((rc = pending_job(w, rs__be64_get(rank_key), true, &j)) != 0 || !j->totals)
        return rc;
    for (size_t i = 0; i < sums->n; i++)
        rs_span_cover(&j->jv.t0, &j->jv.t1, sums->v[i].window,
                      sums->v[i].window + sums->v[i].window_ns);
    if (kernels)
        j->jv.flags |= RS_JTOP_WINDOWS;
    return 0;
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
