/* The kernel-window database (kwin): per (rank, kind, window) totals per kernel name or copy kind,
 * written by rollups (rollup.c) and by agents that send totals instead of records (ingest.c), and
 * read by the window scans (store.h). A window's stored parts are read, merged with what is added
 * and written back in the caller's transaction, so totals from any number of writers add up. */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/array.h"
#include "common/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int
rs__kwin_sums_add(struct rs__kwin_sums *s, const struct rs__kwin_sum *x)
{
    if (RS_ARRAY_RESERVE(s->v, s->cap, s->n, 1) != 0)
        return -ENOMEM;
    s->v[s->n++] = *x;
    return 0;
}

static int
by_window_name(const void *a, const void *b)
{
    const struct rs__kwin_sum *x = a, *y = b;
    if (x->window != y->window)
        return x->window < y->window ? -1 : 1;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* Sorts and folds equal (window, name) entries into one. */
static void
sums_fold(struct rs__kwin_sums *s)
{
    size_t out = 0;

    if (s->n > 1)
        qsort(s->v, s->n, sizeof *s->v, by_window_name);
    for (size_t i = 0; i < s->n; i++) {
        if (out > 0 && s->v[out - 1].window == s->v[i].window && s->v[out - 1].key == s->v[i].key) {
            struct rs__kwin_sum *d = &s->v[out - 1];
            d->count += s->v[i].count;
            if (s->v[i].window_ns > d->window_ns)
                d->window_ns = s->v[i].window_ns;
            d->total_ns += s->v[i].total_ns;
            d->bytes += s->v[i].bytes;
            if (s->v[i].max_ns > d->max_ns)
                d->max_ns = s->v[i].max_ns;
        } else {
            s->v[out++] = s->v[i];
        }
    }
    s->n = out;
}

static void
kwin_key(struct rs_key_kwin *k, const uint8_t *rank_key, int kind, uint64_t start, uint16_t part)
{
    memcpy(k->job_id, rank_key, 8);
    memcpy(k->rank, rank_key + 8, 4);
    k->kind[0] = 0;
    k->kind[1] = (uint8_t)kind;
    rs__be64_put(k->start_ns, start);
    k->part[0] = (uint8_t)(part >> 8);
    k->part[1] = (uint8_t)part;
}

/* Merges the window's folded sums (add[0..n), one per key) with its stored parts of `kind` and
 * writes them back. */
static int
merge_window(rs_store_write *w, const uint8_t *rank_key, int kind, const struct rs__kwin_sum *add,
             size_t n)
{
    MDB_txn *txn = w->txn;
    MDB_dbi dbi = w->store->kwin;
    struct rs__kwin_sums all = {NULL, 0, 0};
    struct rs_key_kwin key;
    uint64_t span = 0;
    int rc = 0;

    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = rs__kwin_sums_add(&all, &add[i]);
        span = add[i].window_ns > span ? add[i].window_ns : span;
    }
    /* the stored parts: read, then delete (rewritten below) */
    for (uint32_t part = 0; rc == 0 && part <= UINT16_MAX; part++) {
        MDB_val k = {sizeof key, &key}, v;
        struct rs_kwin_header h;
        kwin_key(&key, rank_key, kind, add[0].window, (uint16_t)part);
        if ((rc = mdb_get(txn, dbi, &k, &v)) != 0) {
            rc = rc == MDB_NOTFOUND ? 0 : rs__store_err(rc);
            break;
        }
        if (v.mv_size < sizeof h) {
            rc = RS_E_CORRUPT;
            break;
        }
        memcpy(&h, v.mv_data, sizeof h);
        if (h.version != RS_VALUE_VERSION ||
            v.mv_size != sizeof h + h.n * sizeof(struct rs_kwin_entry)) {
            rc = RS_E_CORRUPT;
            break;
        }
        if (h.window_ns > span) /* the window length changed: the merged one covers both */
            span = h.window_ns;
        for (uint32_t i = 0; i < h.n && rc == 0; i++) {
            struct rs_kwin_entry e;
            memcpy(&e, (const char *)v.mv_data + sizeof h + i * sizeof e, sizeof e);
            struct rs__kwin_sum x = {add[0].window, h.window_ns, e.key, e.total_ns, e.max_ns, e.bytes,
                                     e.count};
            rc = rs__kwin_sums_add(&all, &x);
        }
        if (rc == 0 && (rc = mdb_del(txn, dbi, &k, NULL)) != 0) {
            rc = rs__store_err(rc);
            break;
        }
    }
    if (rc == 0)
        sums_fold(&all);
    if (rc == 0 && all.n > (size_t)(UINT16_MAX + 1) * RS_KWIN_PER_PART)
        rc = RS_E_TOO_BIG; /* 3.8 million names in one window: not a real job */
    for (size_t i = 0, part = 0; rc == 0 && i < all.n; part++) {
        uint8_t buf[RS_STORE_CHUNK_BYTES];
        size_t cnt = all.n - i < RS_KWIN_PER_PART ? all.n - i : RS_KWIN_PER_PART;
        struct rs_kwin_header h = {RS_VALUE_VERSION, (uint32_t)cnt, span};
        memcpy(buf, &h, sizeof h);
        for (size_t j = 0; j < cnt; j++) {
            const struct rs__kwin_sum *x = &all.v[i + j];
            struct rs_kwin_entry e = {x->key, x->total_ns, x->bytes,
                                      x->count > UINT32_MAX ? UINT32_MAX : (uint32_t)x->count,
                                      x->max_ns > UINT32_MAX ? UINT32_MAX : (uint32_t)x->max_ns};
            memcpy(buf + sizeof h + j * sizeof e, &e, sizeof e);
        }
        kwin_key(&key, rank_key, kind, add[0].window, (uint16_t)part);
        MDB_val k = {sizeof key, &key}, v = {sizeof h + cnt * sizeof(struct rs_kwin_entry), buf};
        rc = rs__store_err(mdb_put(txn, dbi, &k, &v, 0));
        i += cnt;
    }
    free(all.v);
    return rc;
}

int
rs__kwin_merge(rs_store_write *w, const uint8_t *rank_key, int kind, struct rs__kwin_sums *sums,
               uint64_t *windows)
{
    int rc = 0;

    sums_fold(sums);
    for (size_t i = 0, j; i < sums->n && rc == 0; i = j) {
        for (j = i; j < sums->n && sums->v[j].window == sums->v[i].window; j++)
            ;
        rc = merge_window(w, rank_key, kind, &sums->v[i], j - i);
        ++*windows;
    }
    return rc;
}

struct windows_ctx {
    rs_store_read *r;
    uint64_t t1;
    int kind;
    rs_store_kernel_window_cb kernel_cb; /* the one of the kind */
    rs_store_copy_window_cb copy_cb;
    void *arg;
    struct rs__name_buf name;
};

static int
visit_window(void *p, const MDB_val *k, const MDB_val *v)
{
    struct windows_ctx *ctx = p;
    const struct rs_key_kwin *key = k->mv_data;
    struct rs_kwin_header h;
    int rc;

    if (k->mv_size != sizeof *key || v->mv_size < sizeof h)
        return RS_E_CORRUPT;
    uint64_t start = rs__be64_get(key->start_ns);
    if (start >= ctx->t1)
        return 1;
    memcpy(&h, v->mv_data, sizeof h);
    if (v->mv_size != sizeof h + h.n * sizeof(struct rs_kwin_entry))
        return RS_E_CORRUPT;
    for (uint32_t i = 0; i < h.n; i++) {
        struct rs_kwin_entry e;
        memcpy(&e, (const char *)v->mv_data + sizeof h + i * sizeof e, sizeof e);
        if (ctx->kind == RS_SERIES_MEMCPY) {
            struct rs_copy_window cw = {start,      h.window_ns, (uint32_t)e.key, e.count,
                                        e.total_ns, e.max_ns,    e.bytes};
            rc = ctx->copy_cb(ctx->arg, &cw);
        } else {
            struct rs_kernel_window kw = {start, h.window_ns, e.count, e.total_ns, e.max_ns};
            if ((rc = rs__store_resolve_name(ctx->r, &ctx->name, e.key)) == 0)
                rc = ctx->kernel_cb(ctx->arg, &kw, ctx->name.s, e.key);
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int
windows_scan(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0, struct windows_ctx *ctx)
{
    struct rs_key_kwin from;
    uint8_t rank_key[12];
    int rc;

    rs__be64_put(rank_key, rs__store_job_id(job));
    rs__be32_put(rank_key + 8, rank);
    kwin_key(&from, rank_key, ctx->kind, t0, 0);
    rc = rs__store_prefix_scan(r, r->store->kwin, &from, 14, &from, sizeof from, visit_window, ctx);
    free(ctx->name.s);
    return rc == 1 ? 0 : rc;
}

int
rs_store_kernel_windows_scan(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0,
                             uint64_t t1, rs_store_kernel_window_cb cb, void *arg)
{
    struct windows_ctx ctx = {r, t1, RS_SERIES_KERNEL, cb, NULL, arg, {NULL, 0}};
    return windows_scan(r, job, rank, t0, &ctx);
}

int
rs_store_copy_windows_scan(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0,
                           uint64_t t1, rs_store_copy_window_cb cb, void *arg)
{
    struct windows_ctx ctx = {r, t1, RS_SERIES_MEMCPY, NULL, cb, arg, {NULL, 0}};
    return windows_scan(r, job, rank, t0, &ctx);
}
