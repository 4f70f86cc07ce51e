/* GPU telemetry in the store: agents send NVML readings keyed by GPU UUID (proto/wire.h struct
 * rs_gpu_sample); the writer files each under the (job, rank) whose collector last reported that
 * UUID (the same batch's ranks, else the gpu_ranks table, gpu_ranks.c), as a series of kind
 * RS_SERIES_GPU (struct rs_gpu_value chunks) — so a job holds only its own GPUs' readings, and
 * retention and job deletion treat them like its other series. Readings of a GPU no stored rank
 * reports are counted and dropped. */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/error.h"
#include "common/hash.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static _Atomic uint64_t unattributed_total;

static uint64_t
uuid_hash(const char *uuid)
{
    uint64_t h = rs_hash_fnv1a64(uuid, strlen(uuid));
    return h ? h : 1;
}

uint64_t
rs_store_gpu_unattributed(void)
{
    return atomic_load(&unattributed_total);
}

static uint32_t
ms_of(uint64_t ns)
{
    return (uint32_t)(ns / 1000000u); /* wraps: readers take differences modulo 2^32 */
}

static uint16_t
u16(uint64_t v)
{
    return v > UINT16_MAX ? UINT16_MAX : (uint16_t)v;
}

static uint32_t
u32(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static void
to_value(const struct rs_gpu_sample *g, struct rs_gpu_value *v)
{
    memset(v, 0, sizeof *v);
    v->time_ns = g->time_ns;
    v->present = g->present;
    v->reasons = (uint32_t)g->clock_reasons;
    v->sm_mhz = u16(g->sm_clock_mhz);
    v->sm_max_mhz = u16(g->sm_clock_max_mhz);
    v->mem_mhz = u16(g->mem_clock_mhz);
    v->mem_max_mhz = u16(g->mem_clock_max_mhz);
    v->power_mw = g->power_mw;
    v->power_limit_mw = g->power_limit_mw;
    v->mem_used_mib = u32(g->mem_used_bytes >> 20);
    v->mem_total_mib = u32(g->mem_total_bytes >> 20);
    v->violation_ms[0] = ms_of(g->power_violation_ns);
    v->violation_ms[1] = ms_of(g->thermal_violation_ns);
    v->violation_ms[2] = ms_of(g->sync_boost_violation_ns);
    v->violation_ms[3] = ms_of(g->board_violation_ns);
    v->violation_ms[4] = ms_of(g->reliability_violation_ns);
    v->ecc_corrected = u32(g->ecc_corrected);
    v->ecc_uncorrected = u32(g->ecc_uncorrected);
    v->pcie_replay = g->pcie_replay;
    v->nvlink_errors = u32(g->nvlink_errors);
    v->remapped_correctable = u16(g->remapped_correctable);
    v->remapped_uncorrectable = u16(g->remapped_uncorrectable);
    v->xid_count = u16(g->xid_count);
    v->last_xid = u16(g->last_xid);
    v->temperature_c = (uint8_t)g->temperature_c; /* the decoder bounds these to 255 */
    v->util_gpu_pct = (uint8_t)g->util_gpu_pct;
    v->util_mem_pct = (uint8_t)g->util_mem_pct;
    v->pcie_gen = (uint8_t)g->pcie_gen;
    v->pcie_gen_max = (uint8_t)g->pcie_gen_max;
    v->pcie_width = (uint8_t)g->pcie_width;
    v->pcie_width_max = (uint8_t)g->pcie_width_max;
    v->nvlink_up = (uint8_t)g->nvlink_up;
    v->remap_flags = (uint8_t)((g->remap_pending ? 1 : 0) | (g->remap_failed ? 2 : 0));
}

void
rs__gpu_value_read(const struct rs_gpu_value *v, struct rs_gpu_sample *g)
{
    memset(g, 0, sizeof *g);
    g->time_ns = v->time_ns;
    g->present = v->present;
    g->clock_reasons = v->reasons;
    g->sm_clock_mhz = v->sm_mhz;
    g->sm_clock_max_mhz = v->sm_max_mhz;
    g->mem_clock_mhz = v->mem_mhz;
    g->mem_clock_max_mhz = v->mem_max_mhz;
    g->power_mw = v->power_mw;
    g->power_limit_mw = v->power_limit_mw;
    g->mem_used_bytes = (uint64_t)v->mem_used_mib << 20;
    g->mem_total_bytes = (uint64_t)v->mem_total_mib << 20;
    g->power_violation_ns = (uint64_t)v->violation_ms[0] * 1000000u;
    g->thermal_violation_ns = (uint64_t)v->violation_ms[1] * 1000000u;
    g->sync_boost_violation_ns = (uint64_t)v->violation_ms[2] * 1000000u;
    g->board_violation_ns = (uint64_t)v->violation_ms[3] * 1000000u;
    g->reliability_violation_ns = (uint64_t)v->violation_ms[4] * 1000000u;
    g->ecc_corrected = v->ecc_corrected;
    g->ecc_uncorrected = v->ecc_uncorrected;
    g->pcie_replay = v->pcie_replay;
    g->nvlink_errors = v->nvlink_errors;
    g->remapped_correctable = v->remapped_correctable;
    g->remapped_uncorrectable = v->remapped_uncorrectable;
    g->xid_count = v->xid_count;
    g->last_xid = v->last_xid;
    g->temperature_c = v->temperature_c;
    g->util_gpu_pct = v->util_gpu_pct;
    g->util_mem_pct = v->util_mem_pct;
    g->pcie_gen = v->pcie_gen;
    g->pcie_gen_max = v->pcie_gen_max;
    g->pcie_width = v->pcie_width;
    g->pcie_width_max = v->pcie_width_max;
    g->nvlink_up = v->nvlink_up;
    g->remap_pending = v->remap_flags & 1;
    g->remap_failed = (v->remap_flags & 2) != 0;
}

/* Where one reading goes. */
struct target {
    uint64_t job_id, time_ns;
    uint32_t rank, index;
};

static int
cmp_target(const void *a, const void *b)
{
    const struct target *x = a, *y = b;

    if (x->job_id != y->job_id)
        return x->job_id < y->job_id ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The ranks of a batch by their GPU's UUID hash, so that each reading finds its rank in log time:
 * a hostile agent's 65,536 readings against 4,096 ranks must not cost 2^28 comparisons. */
struct batch_gpu {
    uint64_t hash;
    uint32_t index; /* into the batch's ranks */
};

static int
cmp_batch_gpu(const void *a, const void *b)
{
    const struct batch_gpu *x = a, *y = b;
    return x->hash < y->hash ? -1 : x->hash > y->hash;
}

/* A rank of this batch that reported `uuid` (its identity's GPU), else the stored map's
 * (gpu_ranks.c). */
static bool
attribute(rs_store_write *w, const struct rs_agent_batch *b, const struct batch_gpu *by_hash,
          size_t n, const char *uuid, uint64_t *job_id, uint32_t *rank)
{
    struct batch_gpu key = {uuid_hash(uuid), 0};
    const struct batch_gpu *hit = n ? bsearch(&key, by_hash, n, sizeof key, cmp_batch_gpu) : NULL;

    while (hit && hit > by_hash && hit[-1].hash == key.hash)
        hit--; /* the first of equal hashes */
    for (; hit && hit < by_hash + n && hit->hash == key.hash; hit++) {
        const struct rs_rank_identity *id = &b->ranks[hit->index].identity;
        if (strcmp(id->gpu_uuid, uuid) == 0 &&
            rs__store_job_key(w->txn, w->store, id->job, job_id) == 0) {
            *rank = id->rank;
            return true;
        }
    }
    return rs__gpu_rank_get(w->txn, w->store, uuid, job_id, rank) == 0;
}

int
rs__store_write_gpus(rs_store_write *w, const struct rs_agent_batch *b)
{
    struct target *t;
    struct rs_gpu_value *v;
    uint32_t n = 0;
    int rc = 0;

    if (b->n_gpus == 0)
        return 0;
    t = calloc(b->n_gpus, sizeof *t);
    v = calloc(b->n_gpus, sizeof *v);
    struct batch_gpu *by_hash = calloc(b->n_ranks ? b->n_ranks : 1, sizeof *by_hash);
    size_t n_hash = 0;
    if (!t || !v || !by_hash) {
        free(by_hash);
        rc = -ENOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < b->n_ranks; i++)
        if (b->ranks[i].identity.gpu_uuid && b->ranks[i].identity.gpu_uuid[0])
            by_hash[n_hash++] = (struct batch_gpu){uuid_hash(b->ranks[i].identity.gpu_uuid), i};
    qsort(by_hash, n_hash, sizeof *by_hash, cmp_batch_gpu);
    for (uint32_t i = 0; i < b->n_gpus; i++) {
        struct target x = {0, b->gpus[i].time_ns, 0, i};
        if (attribute(w, b, by_hash, n_hash, b->gpus[i].uuid, &x.job_id, &x.rank))
            t[n++] = x;
        else
            atomic_fetch_add(&unattributed_total, 1);
    }
    free(by_hash);
    qsort(t, n, sizeof *t, cmp_target);
    const uint32_t per_chunk = RS_STORE_CHUNK_BYTES / sizeof *v;
    for (uint32_t i = 0; i < n && rc == 0;) {
        uint32_t j = i, cnt = 0;
        while (j < n && cnt < per_chunk && t[j].job_id == t[i].job_id && t[j].rank == t[i].rank)
            to_value(&b->gpus[t[j].index], &v[cnt++]), j++;
        struct rs_key_series key;
        memset(&key, 0, sizeof key);
        rs__be64_put(key.job_id, t[i].job_id);
        rs__be32_put(key.rank, t[i].rank);
        key.kind[1] = RS_SERIES_GPU;
        rc = rs__store_put_chunk(w, &key, v[0].time_ns, v, cnt * sizeof *v);
        i = j;
    }
out:
    free(t);
    free(v);
    return rc;
}

/* ---- reads -------------------------------------------------------------------------------- */

struct scan_ctx {
    uint64_t t0, t1;
    rs_store_gpu_cb cb;
    void *arg;
};

static int
visit_chunk(void *p, const MDB_val *k, const MDB_val *v)
{
    struct scan_ctx *ctx = p;
    const struct rs_key_series *key = k->mv_data;
    struct rs_gpu_value gv;
    struct rs_gpu_sample g;
    int rc;

    if (k->mv_size != sizeof *key || v->mv_size % sizeof gv != 0)
        return RS_E_CORRUPT;
    if (rs__be64_get(key->start_ns) >= ctx->t1)
        return 1;
    for (size_t off = 0; off < v->mv_size; off += sizeof gv) {
        memcpy(&gv, (const char *)v->mv_data + off, sizeof gv);
        if (gv.time_ns < ctx->t0 || gv.time_ns >= ctx->t1)
            continue;
        rs__gpu_value_read(&gv, &g);
        if ((rc = ctx->cb(ctx->arg, &g)) != 0)
            return rc;
    }
    return 0;
}

/* The (job, rank, RS_SERIES_GPU) prefix of `job`'s rank; RS_E_NOT_FOUND for an unknown job. */
static int
gpu_prefix(rs_store_read *r, const char *job, uint32_t rank, struct rs_key_series *key)
{
    uint64_t id;
    int rc;

    if ((rc = rs__store_job_key(r->txn, r->store, job, &id)) != 0)
        return rc;
    memset(key, 0, sizeof *key);
    rs__be64_put(key->job_id, id);
    rs__be32_put(key->rank, rank);
    key->kind[1] = RS_SERIES_GPU;
    return 0;
}

int
rs_store_gpu_scan(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0, uint64_t t1,
                  rs_store_gpu_cb cb, void *arg)
{
    struct rs_key_series from;
    struct scan_ctx ctx = {t0, t1, cb, arg};
    int rc = gpu_prefix(r, job, rank, &from);

    if (rc != 0)
        return rc == RS_E_NOT_FOUND ? 0 : rc;
    /* a chunk holds one batch's readings (seconds): start a margin earlier, filter by time */
    rs__be64_put(from.start_ns, rs_store_kernel_scan_from(t0));
    rc = rs__store_prefix_scan(r, r->store->series, &from, RS_KEY_KIND_PREFIX, &from, sizeof from,
                               visit_chunk, &ctx);
    return rc == 1 ? 0 : rc;
}

/* The value of the newest entry of the (job, rank, kind) that `key` starts with (copied to
 * out[0..size), which must be a multiple of `unit` long; the last `unit` bytes are taken): 0,
 * RS_E_NOT_FOUND, RS_E_CORRUPT or a storage error. */
static int
newest_of_kind(rs_store_read *r, struct rs_key_series *key, size_t unit, void *out)
{
    MDB_cursor *c;
    MDB_val k, v;
    int rc;

    /* the first key after the series, then one back */
    memset(key->start_ns, 0xff, sizeof key->start_ns);
    memset(key->uniq, 0xff, sizeof key->uniq);
    if ((rc = mdb_cursor_open(r->txn, r->store->series, &c)) != 0)
        return rs__store_err(rc);
    k = (MDB_val){sizeof *key, key};
    rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
    rc = rc == 0              ? mdb_cursor_get(c, &k, &v, MDB_PREV)
         : rc == MDB_NOTFOUND ? mdb_cursor_get(c, &k, &v, MDB_LAST)
                              : rc;
    if (rc != 0)
        rc = rs__store_err(rc);
    else if (k.mv_size != sizeof *key || memcmp(k.mv_data, key, RS_KEY_KIND_PREFIX) != 0)
        rc = RS_E_NOT_FOUND;
    else if (v.mv_size < unit || v.mv_size % unit != 0)
        rc = RS_E_CORRUPT;
    else /* a chunk's newest reading is its last (readings are in time order within a chunk) */
        memcpy(out, (const char *)v.mv_data + v.mv_size - unit, unit);
    mdb_cursor_close(c);
    return rc;
}

int
rs_store_gpu_last(rs_store_read *r, const char *job, uint32_t rank, struct rs_gpu_sample *out)
{
    struct rs_key_series key;
    struct rs_gpu_value gv;
    struct rs_gpu_window w;
    int rc = gpu_prefix(r, job, rank, &key);

    if (rc != 0 || (rc = newest_of_kind(r, &key, sizeof gv, &gv)) != RS_E_NOT_FOUND) {
        if (rc == 0)
            rs__gpu_value_read(&gv, out);
        return rc;
    }
    /* every reading rolled up: the newest window stands for them */
    rs__be16_put(key.kind, RS_SERIES_GPU_WINDOW);
    if ((rc = newest_of_kind(r, &key, sizeof w, &w)) == 0)
        rs__gpu_window_as_sample(&w, out);
    return rc;
}
