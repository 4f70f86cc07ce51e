/* Kernel windows: per (rank, kind, window) totals per kernel name or copy kind, written by rollups
 * (rollup.c, into kwin) and by agents that send totals instead of records (ingest.c, into awin),
 * and read by the window scans (store.h). A window's stored parts are read, merged with what is
 * added and written back in the caller's transaction, so totals from any number of writers add
 * up. */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/array.h"
#include "common/error.h"

#include <errno.h>
#include <stdbool.h>
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
    memcpy(k, rank_key, RS_KEY_RANK_PREFIX); /* job_id, rank */
    k->kind[0] = 0;
    k->kind[1] = (uint8_t)kind;
    rs__be64_put(k->start_ns, start);
    rs__be16_put(k->part, part);
}

static bool
is_agent_kind(int kind)
{
    return kind == RS_KWIN_AGENT_KERNEL || kind == RS_KWIN_AGENT_MEMCPY;
}

/* The key of a window part where it is written: agent kinds in awin, rollup kinds in kwin. */
union window_key {
    struct rs_key_kwin kwin;
    struct rs_key_awin awin;
};

static MDB_val
window_key(union window_key *u, const uint8_t *rank_key, int kind, uint64_t start, uint16_t part)
{
    if (is_agent_kind(kind)) {
        rs__awin_key(&u->awin, rank_key, kind, start, part);
        return (MDB_val){sizeof u->awin, &u->awin};
    }
    kwin_key(&u->kwin, rank_key, kind, start, part);
    return (MDB_val){sizeof u->kwin, &u->kwin};
}

/* ---- the value codec (keys.h: version 1 fixed entries, version 2 packed, version 3 numbered) ----
 */

static size_t
varint_put(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    for (; v >= 0x80; v >>= 7)
        p[n++] = (uint8_t)(v | 0x80);
    p[n++] = (uint8_t)v;
    return n;
}

static bool
varint_get(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

bool
rs__kwin_names_kernels(int kind)
{
    return kind == RS_KWIN_KERNEL || kind == RS_KWIN_AGENT_KERNEL;
}

int
rs__kwin_value_decode(const struct rs__kwin_keys *keys, int kind, const void *data, size_t len,
                      uint64_t *window_ns, int (*fn)(void *arg, const struct rs__kwin_entry *e),
                      void *arg)
{
    const uint8_t *p = data, *end = p + len;
    struct rs_kwin_header h;
    int rc;

    if (len < sizeof h)
        return RS_E_CORRUPT;
    memcpy(&h, p, sizeof h);
    p += sizeof h;
    if (h.n == 0 || h.window_ns == 0)
        return RS_E_CORRUPT;
    *window_ns = h.window_ns;
    if (h.version == 1) {
        if (len != sizeof h + (size_t)h.n * sizeof(struct rs_kwin_entry))
            return RS_E_CORRUPT;
        for (uint32_t i = 0; i < h.n; i++, p += sizeof(struct rs_kwin_entry)) {
            struct rs_kwin_entry e;
            memcpy(&e, p, sizeof e);
            struct rs__kwin_entry x = {e.key, e.count, e.total_ns, e.max_ns, e.bytes};
            if ((rc = fn(arg, &x)) != 0)
                return rc;
        }
        return 0;
    }
    if (h.version != RS_KWIN_VERSION_PACKED && h.version != RS_KWIN_VERSION_NUMBERED)
        return RS_E_CORRUPT;
    for (uint32_t i = 0; i < h.n; i++) {
        struct rs__kwin_entry x;
        if (h.version == RS_KWIN_VERSION_PACKED) {
            if (end - p < 8)
                return RS_E_CORRUPT;
            memcpy(&x.key, p, 8);
            p += 8;
        } else if (!varint_get(&p, end, &x.key)) {
            return RS_E_CORRUPT;
        } else if (rs__kwin_names_kernels(kind)) { /* a kernel's number */
            if (x.key > UINT32_MAX)
                return RS_E_CORRUPT;
            if ((rc = keys->hash_of(keys->arg, (uint32_t)x.key, &x.key)) != 0)
                return rc;
        }
        if (!varint_get(&p, end, &x.count) || !varint_get(&p, end, &x.total_ns) ||
            !varint_get(&p, end, &x.max_ns) || !varint_get(&p, end, &x.bytes))
            return RS_E_CORRUPT;
        if ((rc = fn(arg, &x)) != 0)
            return rc;
    }
    return p == end ? 0 : RS_E_CORRUPT;
}

/* Encodes sums[*next..n) of one window into buf (a part of at most RS_STORE_CHUNK_BYTES), as many
 * as fit, naming kernels by number when `w` is given (kernel kinds); *next moves past them. Returns
 * 0 or the error of a number's lookup; *len gets the value's length. */
static int
encode_part(rs_store_write *w, uint8_t *buf, uint64_t window_ns, const struct rs__kwin_sums *all,
            size_t *next, size_t *len_out)
{
    size_t len = sizeof(struct rs_kwin_header);
    uint32_t n = 0;
    int rc;

    while (*next < all->n && len + RS_KWIN_MAX_ENTRY_BYTES <= RS_STORE_CHUNK_BYTES) {
        const struct rs__kwin_sum *x = &all->v[(*next)++];
        uint64_t key = x->key;
        if (w) {
            uint32_t number;
            if ((rc = rs__numbers_number(w, x->key, &number)) != 0)
                return rc;
            key = number;
        }
        len += varint_put(buf + len, key);
        len += varint_put(buf + len, x->count);
        len += varint_put(buf + len, x->total_ns);
        len += varint_put(buf + len, x->max_ns);
        len += varint_put(buf + len, x->bytes);
        n++;
    }
    struct rs_kwin_header h = {RS_KWIN_VERSION_NUMBERED, n, window_ns};
    memcpy(buf, &h, sizeof h);
    *len_out = len;
    return 0;
}

int
rs__kwin_gather_entry(void *arg, const struct rs__kwin_entry *e)
{
    const struct rs__kwin_gather *g = arg;
    struct rs__kwin_sum x = {g->window, g->window_ns, e->key,  e->total_ns,
                             e->max_ns, e->bytes,     e->count};
    return rs__kwin_sums_add(g->all, &x);
}

/* Merges the window's folded sums (add[0..n), one per key) with its stored parts of `kind` and
 * writes them back. */
static int
merge_window(rs_store_write *w, const uint8_t *rank_key, int kind, const struct rs__kwin_sum *add,
             size_t n)
{
    MDB_txn *txn = w->txn;
    MDB_dbi dbi = is_agent_kind(kind) ? w->store->awin : w->store->kwin;
    struct rs__kwin_sums all = {NULL, 0, 0};
    union window_key key;
    uint64_t span = 0;
    int rc = 0;

    rs_store_write *numbering = rs__kwin_names_kernels(kind) ? w : NULL;
    const struct rs__kwin_keys keys = {rs__numbers_hash_in_write, w};

    for (size_t i = 0; i < n; i++)
        span = add[i].window_ns > span ? add[i].window_ns : span;
    /* a new window that fits one part (the common case for agent windows): one put */
    uint8_t first[RS_STORE_CHUNK_BYTES];
    struct rs__kwin_sums view = {(struct rs__kwin_sum *)add, n, n};
    size_t fitted = 0, first_len = 0;
    if ((rc = encode_part(numbering, first, span, &view, &fitted, &first_len)) != 0)
        return rc;
    if (fitted == n) {
        MDB_val k = window_key(&key, rank_key, kind, add[0].window, 0), v = {first_len, first};
        if ((rc = mdb_put(txn, dbi, &k, &v, MDB_NOOVERWRITE)) != MDB_KEYEXIST)
            return rs__store_err(rc);
        rc = 0;
    }
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = rs__kwin_sums_add(&all, &add[i]);
    /* the stored parts: read, then delete (rewritten below) */
    for (uint32_t part = 0; rc == 0 && part <= UINT16_MAX; part++) {
        MDB_val k = window_key(&key, rank_key, kind, add[0].window, (uint16_t)part), v;
        if ((rc = mdb_get(txn, dbi, &k, &v)) != 0) {
            rc = rc == MDB_NOTFOUND ? 0 : rs__store_err(rc);
            break;
        }
        /* (the stored part's own length: decode sets g.window_ns before the first entry) */
        struct rs__kwin_gather g = {&all, add[0].window, 0};
        if ((rc = rs__kwin_value_decode(&keys, kind, v.mv_data, v.mv_size, &g.window_ns,
                                        rs__kwin_gather_entry, &g)) != 0)
            break;
        if (g.window_ns > span) /* the window length changed: the merged one covers both */
            span = g.window_ns;
        if ((rc = mdb_del(txn, dbi, &k, NULL)) != 0) {
            rc = rs__store_err(rc);
            break;
        }
    }
    if (rc == 0)
        sums_fold(&all);
    for (size_t next = 0, part = 0; rc == 0 && next < all.n; part++) {
        uint8_t buf[RS_STORE_CHUNK_BYTES];
        if (part > UINT16_MAX) {
            rc = RS_E_TOO_BIG; /* millions of names in one window: not a real job */
            break;
        }
        size_t len = 0;
        if ((rc = encode_part(numbering, buf, span, &all, &next, &len)) != 0)
            break;
        MDB_val k = window_key(&key, rank_key, kind, add[0].window, (uint16_t)part), v = {len, buf};
        rc = rs__store_err(mdb_put(txn, dbi, &k, &v, 0));
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
    uint64_t end_after; /* windows that end at or before this are skipped unread (0: none) */
    uint64_t t1;
    int kind;
    rs_store_kernel_window_cb kernel_cb; /* the one of the kind */
    rs_store_copy_window_cb copy_cb;
    void *arg;
    struct rs__name_cache *names;
    struct rs__number_cache *numbers;
};

struct visit_entry_ctx {
    struct windows_ctx *ctx;
    uint64_t start, window_ns;
};

static int
visit_entry(void *arg, const struct rs__kwin_entry *e)
{
    struct visit_entry_ctx *v = arg;
    struct windows_ctx *ctx = v->ctx;
    int rc;

    if (ctx->kind == RS_SERIES_MEMCPY) {
        struct rs_copy_window cw = {v->start,    v->window_ns, (uint32_t)e->key, e->count,
                                    e->total_ns, e->max_ns,    e->bytes};
        return ctx->copy_cb(ctx->arg, &cw);
    }
    struct rs_kernel_window kw = {v->start, v->window_ns, e->count, e->total_ns, e->max_ns};
    const char *name;
    if ((rc = rs__name_cache_get(ctx->r, ctx->names, e->key, &name)) != 0)
        return rc;
    return ctx->kernel_cb(ctx->arg, &kw, name, e->key);
}

/* One window part that starts at `start`: its entries to the callback of ctx's kind. Returns 1
 * past ctx->t1 (windows come in time order). */
static int
visit_window(struct windows_ctx *ctx, uint64_t start, int kind, const MDB_val *v)
{
    struct visit_entry_ctx ve = {ctx, start, 0};
    struct rs_kwin_header h;
    if (ve.start >= ctx->t1)
        return 1;
    if (ctx->end_after && v->mv_size >= sizeof h) { /* (the header alone says where it ends) */
        memcpy(&h, v->mv_data, sizeof h);
        if (ve.start + h.window_ns <= ctx->end_after)
            return 0;
    }
    const struct rs__kwin_keys keys = {rs__numbers_hash_in_read, ctx->numbers};
    return rs__kwin_value_decode(&keys, kind, v->mv_data, v->mv_size, &ve.window_ns, visit_entry,
                                 &ve);
}

static int
visit_kwin_window(void *p, const MDB_val *k, const MDB_val *v)
{
    const struct rs_key_kwin *key = k->mv_data;

    if (k->mv_size != sizeof *key)
        return RS_E_CORRUPT;
    return visit_window(p, rs__be64_get(key->start_ns), key->kind[1], v);
}

/* The kind of the windows agents send for rollup kind `kind` (keys.h). */
static int
agent_kind_of(int kind)
{
    return kind == RS_KWIN_MEMCPY ? RS_KWIN_AGENT_MEMCPY : RS_KWIN_AGENT_KERNEL;
}

/* Where a scan for the rank's agent windows that end after `end_after` (not 0) may start in awin,
 * instead of at t0: no earlier than the rank's longest agent window before it (keys.h), when the
 * store knows it. */
static uint64_t
awin_from(rs_store_read *r, const uint8_t *rank_key, uint64_t t0, uint64_t end_after)
{
    MDB_val k = {sizeof(struct rs_key_rank), (void *)rank_key}, v;
    struct rs_rank_value rv;

    if (end_after == 0 || mdb_get(r->txn, r->store->ranks, &k, &v) != 0 || v.mv_size != sizeof rv)
        return t0;
    memcpy(&rv, v.mv_data, sizeof rv);
    uint64_t longest_ns = rs__longest_agent_window_ns(&rv);
    if (longest_ns == 0 || end_after < longest_ns)
        return t0;
    return end_after - longest_ns > t0 ? end_after - longest_ns : t0;
}

/* The rank's agent windows in awin that start in [t0, ctx->t1). */
static int
awin_scan(rs_store_read *r, const uint8_t *rank_key, uint64_t t0, struct windows_ctx *ctx)
{
    MDB_cursor *c;
    MDB_val k, v;
    int rc = mdb_cursor_open(r->txn, r->store->awin, &c);

    if (rc != 0)
        return rs__store_err(rc);
    t0 = awin_from(r, rank_key, t0, ctx->end_after);
    struct rs__awin_walk walk = {c, rank_key, agent_kind_of(ctx->kind), t0, ctx->t1, 0, false};
    while ((rc = rs__awin_next(&walk, &k, &v)) == 0) {
        const struct rs_key_awin *key = k.mv_data;
        if ((rc = rs__store_read_expired(r)) != 0 ||
            (rc = visit_window(ctx, rs__be64_get(key->start_ns), walk.kind, &v)) != 0)
            goto out; /* (the callback's own value) */
    }
    rc = rc == RS_E_NOT_FOUND ? 0 : rc;
out:
    mdb_cursor_close(c);
    return rc;
}

/* The rank's windows of ctx->kind: the rollup windows, then the agent windows (those a format-3
 * store keeps in kwin, then awin's), each in time order. */
static int
windows_scan(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0, struct windows_ctx *ctx)
{
    struct rs_key_kwin from;
    uint8_t rank_key[RS_KEY_RANK_PREFIX];
    uint64_t id;
    int rc;

    if ((rc = rs__store_job_key(r->txn, r->store, job, &id)) != 0)
        return rc == RS_E_NOT_FOUND ? 0 : rc; /* an unknown job has no windows */
    rs__be64_put(rank_key, id);
    rs__be32_put(rank_key + RS_KEY_JOB_PREFIX, rank);
    if (!(ctx->names = calloc(1, sizeof *ctx->names)) ||
        !(ctx->numbers = calloc(1, sizeof *ctx->numbers))) {
        free(ctx->names);
        return -ENOMEM;
    }
    ctx->numbers->txn = r->txn;
    ctx->numbers->store = r->store;
    for (int pass = 0; pass < 2 && (rc == 0 || rc == 1); pass++) {
        kwin_key(&from, rank_key, pass == 0 ? ctx->kind : agent_kind_of(ctx->kind), t0, 0);
        rc = rs__store_prefix_scan(r, r->store->kwin, &from, RS_KEY_KIND_PREFIX, &from, sizeof from,
                                   visit_kwin_window, ctx);
    }
    if (rc == 0 || rc == 1)
        rc = awin_scan(r, rank_key, t0, ctx);
    rs__name_cache_fini(ctx->names);
    free(ctx->names);
    free(ctx->numbers);
    return rc == 1 ? 0 : rc;
}

int
rs_store_kernel_windows_scan(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0,
                             uint64_t t1, rs_store_kernel_window_cb cb, void *arg)
{
    struct windows_ctx ctx = {r, 0, t1, RS_SERIES_KERNEL, cb, NULL, arg, NULL, NULL};
    return windows_scan(r, job, rank, t0, &ctx);
}

int
rs_store_kernel_windows_overlapping(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0,
                                    uint64_t t1, uint64_t lookback_ns, rs_store_kernel_window_cb cb,
                                    void *arg)
{
    struct windows_ctx ctx = {r, t0, t1, RS_SERIES_KERNEL, cb, NULL, arg, NULL, NULL};
    return windows_scan(r, job, rank, t0 > lookback_ns ? t0 - lookback_ns : 0, &ctx);
}

int
rs_store_copy_windows_scan(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0,
                           uint64_t t1, rs_store_copy_window_cb cb, void *arg)
{
    struct windows_ctx ctx = {r, 0, t1, RS_SERIES_MEMCPY, NULL, cb, arg, NULL, NULL};
    return windows_scan(r, job, rank, t0, &ctx);
}
