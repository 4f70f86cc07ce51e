/* Read-side scans over the store (see store.h): jobs, ranks, kernel chunks, collective instances,
 * steps. Every value read from disk is size-checked before use. */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/array.h"
#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
job_from_value(const MDB_val *k, const struct rs_job_value *v, struct rs_job_info *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%.*s", (int)k->mv_size, (const char *)k->mv_data);
    out->world_size = v->world_size;
    out->n_ranks = v->n_ranks;
    out->first_ns = v->first_ns;
    out->last_ns = v->last_ns;
    out->received_ns = v->received_ns;
}

int
rs_store_jobs_scan(rs_store_read *r, rs_store_job_cb cb, void *arg)
{
    MDB_cursor *c;
    MDB_val k, v;
    int rc = mdb_cursor_open(r->txn, r->store->jobs, &c), op = MDB_FIRST;

    if (rc != 0)
        return rs__store_err(rc);
    while ((rc = mdb_cursor_get(c, &k, &v, op)) == 0) {
        struct rs_job_value jv;
        struct rs_job_info info;
        op = MDB_NEXT;
        if (v.mv_size != sizeof jv || k.mv_size > RS_WIRE_MAX_JOB_LEN) {
            rc = RS_E_CORRUPT;
            goto out;
        }
        memcpy(&jv, v.mv_data, sizeof jv);
        job_from_value(&k, &jv, &info);
        if ((rc = rs__store_read_expired(r)) != 0 || (rc = cb(arg, &info)) != 0)
            goto out;
    }
    rc = rc == MDB_NOTFOUND ? 0 : rs__store_err(rc);
out:
    mdb_cursor_close(c);
    return rc;
}

int
rs_store_job_get(rs_store_read *r, const char *job, struct rs_job_info *out)
{
    MDB_val k = {strlen(job), (void *)job}, v;
    struct rs_job_value jv;
    int rc;

    if (k.mv_size == 0 || k.mv_size > RS_WIRE_MAX_JOB_LEN)
        return RS_E_NOT_FOUND;
    if ((rc = mdb_get(r->txn, r->store->jobs, &k, &v)) != 0)
        return rs__store_err(rc);
    if (v.mv_size != sizeof jv)
        return RS_E_CORRUPT;
    memcpy(&jv, v.mv_data, sizeof jv);
    job_from_value(&k, &jv, out);
    return 0;
}

int
rs__store_prefix_scan(rs_store_read *r, MDB_dbi dbi, const void *prefix, size_t plen,
                      const void *from, size_t flen,
                      int (*visit)(void *ctx, const MDB_val *k, const MDB_val *v), void *ctx)
{
    MDB_cursor *c;
    MDB_val k = {flen, (void *)from}, v;
    int rc = mdb_cursor_open(r->txn, dbi, &c);

    if (rc != 0)
        return rs__store_err(rc);
    for (rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        if (k.mv_size < plen || memcmp(k.mv_data, prefix, plen) != 0)
            break;
        if ((rc = rs__store_read_expired(r)) != 0 || (rc = visit(ctx, &k, &v)) != 0)
            goto out;
    }
    rc = rc == MDB_NOTFOUND || rc == 0 ? 0 : rs__store_err(rc);
out:
    mdb_cursor_close(c);
    return rc;
}

struct ranks_ctx {
    rs_store_read *r;
    rs_store_rank_cb cb;
    void *arg;
};

/* Adds one collector's frames (keys.h frame_seqs) to the rank's loss accounting. A collector
 * whose last frames were lost and that sent nothing after cannot be counted: nothing says they
 * existed. Frames stored twice (resent under another dedup key) count as arrived, never below 0. */
static int
visit_frames(void *p, const MDB_val *k, const MDB_val *v)
{
    struct rs_rank_info *info = p;
    struct rs_frames_value fv;

    if (k->mv_size != sizeof(struct rs_key_frames) || v->mv_size != sizeof fv)
        return RS_E_CORRUPT;
    memcpy(&fv, v->mv_data, sizeof fv);
    info->frames += fv.frames;
    info->frames_lost += fv.frame_seq > fv.frames ? fv.frame_seq - fv.frames : 0;
    info->records_lost += fv.records_sent > fv.records ? fv.records_sent - fv.records : 0;
    return 0;
}

static int
visit_rank(void *p, const MDB_val *k, const MDB_val *v)
{
    struct ranks_ctx *ctx = p;
    struct rs_rank_value rv;
    struct rs_rank_info info;

    if (k->mv_size != sizeof(struct rs_key_rank) || v->mv_size != sizeof rv)
        return RS_E_CORRUPT;
    memcpy(&rv, v->mv_data, sizeof rv);
    memset(&info, 0, sizeof info);
    info.rank = rv.rank;
    info.local_rank = rv.local_rank;
    info.world_size = rv.world_size;
    info.pid = rv.pid;
    snprintf(info.host, sizeof info.host, "%.*s", (int)sizeof rv.host - 1, rv.host);
    snprintf(info.gpu_uuid, sizeof info.gpu_uuid, "%.*s", (int)sizeof rv.gpu_uuid - 1, rv.gpu_uuid);
    info.first_ns = rv.first_ns;
    info.last_ns = rv.last_ns;
    info.n_kernels = rv.n_kernels;
    info.kernel_ns = rv.kernel_ns;
    info.n_collectives = rv.n_collectives;
    info.collective_ns = rv.collective_ns;
    info.n_memcpys = rv.n_memcpys;
    info.memcpy_ns = rv.memcpy_ns;
    info.n_steps = rv.n_steps;
    info.step_ns = rv.step_ns;
    info.n_stalls = rv.n_stalls;
    info.dropped_records = rv.dropped_records;
    info.batches = rv.batches;
    info.clock_offset_ns = rv.clock_offset_ns;
    info.collector_flags = rv.collector_flags;
    snprintf(info.collector_status, sizeof info.collector_status, "%.*s",
             (int)sizeof rv.collector_status - 1, rv.collector_status);
    int rc = rs__store_prefix_scan(ctx->r, ctx->r->store->frame_seqs, k->mv_data, k->mv_size,
                                   k->mv_data, k->mv_size, visit_frames, &info);
    return rc ? rc : ctx->cb(ctx->arg, &info);
}

int
rs_store_ranks_scan(rs_store_read *r, const char *job, rs_store_rank_cb cb, void *arg)
{
    struct rs_job_info info;
    struct ranks_ctx ctx = {r, cb, arg};
    uint8_t prefix[RS_KEY_JOB_PREFIX];
    int rc = rs_store_job_get(r, job, &info);

    uint64_t id;
    if (rc != 0 || (rc = rs__store_job_key(r->txn, r->store, job, &id)) != 0)
        return rc;
    rs__be64_put(prefix, id);
    return rs__store_prefix_scan(r, r->store->ranks, prefix, sizeof prefix, prefix, sizeof prefix,
                                 visit_rank, &ctx);
}

struct rank_array {
    struct rs_rank_info *v;
    size_t n, cap;
};

static int
append_rank(void *arg, const struct rs_rank_info *info)
{
    struct rank_array *a = arg;

    if (RS_ARRAY_RESERVE(a->v, a->cap, a->n, 1) != 0)
        return -ENOMEM;
    a->v[a->n++] = *info;
    return 0;
}

int
rs_store_ranks_get(rs_store_read *r, const char *job, struct rs_rank_info **out, size_t *n)
{
    struct rank_array a = {NULL, 0, 0};
    int rc = rs_store_ranks_scan(r, job, append_rank, &a);

    if (rc != 0) {
        free(a.v);
        return rc;
    }
    *out = a.v;
    *n = a.n;
    return 0;
}

int
rs__store_resolve_name(rs_store_read *r, struct rs__name_buf *nb, uint64_t hash)
{
    struct rs_key_string key;
    MDB_val k = {sizeof key, &key}, v;
    int rc;

    rs__be64_put(key.hash, hash);
    rc = mdb_get(r->txn, r->store->strings, &k, &v);
    if (rc == MDB_NOTFOUND) {
        v.mv_size = 1;
        v.mv_data = "?";
    } else if (rc != 0)
        return rs__store_err(rc);
    if (v.mv_size + 1 > nb->cap) {
        char *n = realloc(nb->s, v.mv_size + 1);
        if (!n)
            return -ENOMEM;
        nb->s = n;
        nb->cap = v.mv_size + 1;
    }
    memcpy(nb->s, v.mv_data, v.mv_size);
    nb->s[v.mv_size] = '\0';
    return 0;
}

/* A time-ranged scan over one rank's series of one kind: the callback state. */
struct series_ctx {
    rs_store_read *r;
    uint64_t t1;
    rs_store_kernel_cb kernel_cb; /* the one of the series' kind */
    rs_store_memcpy_cb memcpy_cb;
    rs_store_stall_cb stall_cb;
    void *arg;
    struct rs__name_buf reason;
    struct rs__name_cache *names;
};

int
rs__name_cache_get(rs_store_read *r, struct rs__name_cache *c, uint64_t hash, const char **out)
{
    size_t slot = (size_t)(hash ^ (hash >> 29)) % RS__NAME_CACHE;
    int rc;

    if (c->name[slot].s && c->hash[slot] == hash) {
        *out = c->name[slot].s;
        return 0;
    }
    if ((rc = rs__store_resolve_name(r, &c->name[slot], hash)) != 0)
        return rc;
    c->hash[slot] = hash;
    *out = c->name[slot].s;
    return 0;
}

void
rs__name_cache_fini(struct rs__name_cache *c)
{
    for (size_t i = 0; i < RS__NAME_CACHE; i++)
        free(c->name[i].s);
}

/* Scans series chunks of (job, rank, kind) whose start is in [t0, t1) with visit. */
static int
series_scan(rs_store_read *r, const char *job, uint32_t rank, int kind, uint64_t t0,
            struct series_ctx *ctx, int (*visit)(void *ctx, const MDB_val *k, const MDB_val *v))
{
    struct rs_key_series from;
    uint64_t id;
    int rc;

    if ((rc = rs__store_job_key(r->txn, r->store, job, &id)) != 0)
        return rc == RS_E_NOT_FOUND ? 0 : rc; /* an unknown job has no records */
    memset(&from, 0, sizeof from);
    rs__be64_put(from.job_id, id);
    rs__be32_put(from.rank, rank);
    from.kind[1] = (uint8_t)kind;
    rs__be64_put(from.start_ns, t0);
    if (!(ctx->names = calloc(1, sizeof *ctx->names)))
        return -ENOMEM;
    rc = rs__store_prefix_scan(r, r->store->series, &from, RS_KEY_KIND_PREFIX, &from, sizeof from,
                               visit, ctx);
    rs__name_cache_fini(ctx->names);
    free(ctx->names);
    free(ctx->reason.s);
    return rc == 1 ? 0 : rc;
}

/* The checks every chunk visitor starts with: 0 to read the chunk of values of `value_size`
 * bytes (its start in *start), 1 when it starts past the window (stop), RS_E_CORRUPT. */
static int
chunk_in_window(const struct series_ctx *ctx, const MDB_val *k, const MDB_val *v, size_t value_size,
                uint64_t *start)
{
    const struct rs_key_series *key = k->mv_data;

    if (k->mv_size != sizeof *key || v->mv_size % value_size != 0)
        return RS_E_CORRUPT;
    *start = rs__be64_get(key->start_ns);
    return *start >= ctx->t1 ? 1 : 0;
}

static int
visit_kernel_chunk(void *p, const MDB_val *k, const MDB_val *v)
{
    struct series_ctx *ctx = p;
    rs_store_kernel_cb cb = ctx->kernel_cb;
    struct rs_kernel_value kv;
    uint64_t start;
    int rc;

    if ((rc = chunk_in_window(ctx, k, v, sizeof kv, &start)) != 0)
        return rc;
    for (size_t off = 0; off < v->mv_size; off += sizeof kv) {
        struct rs_kernel_record rec;
        memcpy(&kv, (const char *)v->mv_data + off, sizeof kv);
        const char *name;
        if ((rc = rs__name_cache_get(ctx->r, ctx->names, kv.name_hash, &name)) != 0)
            return rc;
        rec = (struct rs_kernel_record){kv.start_ns, kv.end_ns, 0, kv.stream, kv.device, 0};
        if ((rc = cb(ctx->arg, &rec, name, kv.name_hash)) != 0)
            return rc;
    }
    return 0;
}

int
rs_store_kernels_scan(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0, uint64_t t1,
                      rs_store_kernel_cb cb, void *arg)
{
    struct series_ctx ctx = {r, t1, cb, NULL, NULL, arg, {NULL, 0}, NULL};
    return series_scan(r, job, rank, RS_SERIES_KERNEL, t0, &ctx, visit_kernel_chunk);
}

static int
visit_memcpy_chunk(void *p, const MDB_val *k, const MDB_val *v)
{
    struct series_ctx *ctx = p;
    struct rs_memcpy_value mv;
    uint64_t start;
    int rc;

    if ((rc = chunk_in_window(ctx, k, v, sizeof mv, &start)) != 0)
        return rc;
    for (size_t off = 0; off < v->mv_size; off += sizeof mv) {
        memcpy(&mv, (const char *)v->mv_data + off, sizeof mv);
        struct rs_memcpy_record rec = {mv.start_ns, mv.end_ns, mv.bytes, mv.kind, mv.stream};
        if ((rc = ctx->memcpy_cb(ctx->arg, &rec)) != 0)
            return rc;
    }
    return 0;
}

int
rs_store_memcpys_scan(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0, uint64_t t1,
                      rs_store_memcpy_cb cb, void *arg)
{
    struct series_ctx ctx = {r, t1, NULL, cb, NULL, arg, {NULL, 0}, NULL};
    return series_scan(r, job, rank, RS_SERIES_MEMCPY, t0, &ctx, visit_memcpy_chunk);
}

static int
visit_stall_chunk(void *p, const MDB_val *k, const MDB_val *v)
{
    struct series_ctx *ctx = p;
    rs_store_stall_cb cb = ctx->stall_cb;
    struct rs_stall_value sv;
    uint64_t at; /* when the batch was sent: stall counts have no time of their own */
    int rc;

    if ((rc = chunk_in_window(ctx, k, v, sizeof sv, &at)) != 0)
        return rc;
    for (size_t off = 0; off < v->mv_size; off += sizeof sv) {
        memcpy(&sv, (const char *)v->mv_data + off, sizeof sv);
        const char *kernel;
        if ((rc = rs__name_cache_get(ctx->r, ctx->names, sv.kernel_hash, &kernel)) != 0 ||
            (rc = rs__store_resolve_name(ctx->r, &ctx->reason, sv.reason_hash)) != 0)
            return rc;
        struct rs_stall_record rec = {sv.pc_offset, sv.count, 0, 0, sv.cubin_crc};
        if ((rc = cb(ctx->arg, &rec, at, kernel, ctx->reason.s)) != 0)
            return rc;
    }
    return 0;
}

int
rs_store_stalls_scan(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0, uint64_t t1,
                     rs_store_stall_cb cb, void *arg)
{
    struct series_ctx ctx = {r, t1, NULL, NULL, cb, arg, {NULL, 0}, NULL};
    return series_scan(r, job, rank, RS_SERIES_STALL, t0, &ctx, visit_stall_chunk);
}

struct steps_ctx {
    rs_store_step_cb cb;
    void *arg;
};

bool
rs__step_value_read(const MDB_val *v, struct rs_step_record *rec)
{
    struct rs_step_measured_value mv = {0};

    if (v->mv_size != sizeof(struct rs_step_value) && v->mv_size != sizeof mv)
        return false;
    memcpy(&mv, v->mv_data, v->mv_size);
    rec->start_ns = mv.start_ns;
    rec->end_ns = mv.end_ns;
    rec->measured = v->mv_size == sizeof mv;
    rec->metrics = (struct rs_step_metrics){mv.compute_ns, mv.comm_ns,     mv.exposed_comm_ns,
                                            mv.idle_ns,    mv.host_gap_ns, mv.kernels};
    return true;
}

static int
visit_step(void *p, const MDB_val *k, const MDB_val *v)
{
    struct steps_ctx *ctx = p;
    const struct rs_key_step *key = k->mv_data;
    struct rs_step_record rec;

    if (k->mv_size != sizeof *key || !rs__step_value_read(v, &rec))
        return RS_E_CORRUPT;
    rec.step = rs__be64_get(key->step);
    return ctx->cb(ctx->arg, &rec);
}

int
rs_store_steps_scan(rs_store_read *r, const char *job, uint32_t rank, uint64_t from_step,
                    rs_store_step_cb cb, void *arg)
{
    struct steps_ctx ctx = {cb, arg};
    struct rs_key_step from;
    uint64_t id;
    int rc;

    if ((rc = rs__store_job_key(r->txn, r->store, job, &id)) != 0)
        return rc == RS_E_NOT_FOUND ? 0 : rc; /* an unknown job has no steps */
    rs__be64_put(from.job_id, id);
    rs__be32_put(from.rank, rank);
    rs__be64_put(from.step, from_step);
    return rs__store_prefix_scan(r, r->store->steps, &from, RS_KEY_RANK_PREFIX, &from, sizeof from,
                                 visit_step, &ctx);
}

int
rs_store_batches_count(rs_store_read *r, uint64_t *out)
{
    MDB_stat st;
    int rc = mdb_stat(r->txn, r->store->dedup, &st);

    if (rc != 0)
        return rs__store_err(rc);
    *out = st.ms_entries;
    return 0;
}
