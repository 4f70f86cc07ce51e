/* Rollups of old kernel and memcpy records into per-window totals (see store.h "Rollups"). One
 * rank at a time: its raw chunks older than the horizon are read and deleted, their records summed
 * per (window, kernel name or copy kind), and each window's totals merged into what `kwin` already
 * holds for it (kwin.c) — all in the caller's transaction. Kernel and memcpy values share a layout
 * size and start with (start_ns, end_ns). */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/array.h"
#include "common/error.h"
#include "proto/wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(struct rs_kernel_value) == sizeof(struct rs_memcpy_value),
               "one chunk buffer serves both kinds");

/* The contribution of one raw value of `kind` (kernel or memcpy, same size) to its window. */
static struct rs__kwin_sum
record_sum(int kind, const struct rs_kernel_value *raw, uint64_t window_ns)
{
    uint64_t dur = raw->end_ns > raw->start_ns ? raw->end_ns - raw->start_ns : 0;
    struct rs__kwin_sum x = {
        raw->start_ns - raw->start_ns % window_ns, window_ns, raw->name_hash, dur, dur, 0, 1};

    if (kind == RS_SERIES_MEMCPY) {
        struct rs_memcpy_value mv;
        memcpy(&mv, raw, sizeof mv);
        x.key = mv.kind;
        x.bytes = mv.bytes;
    }
    return x;
}

/* Rolls up one rank's raw chunks of `kind` that start before `horizon`, within *budget records.
 * Sets *more when the budget ran out first. */
static int
rollup_series(rs_store_write *w, struct rs_store_rollup *ru, const uint8_t *rank_key, int kind,
              uint64_t horizon, size_t *budget, bool *more)
{
    struct rs_key_series from;
    struct rs__kwin_sums sums = {NULL, 0, 0};
    MDB_cursor *c;
    MDB_val k, v;
    int rc;

    *more = false;
    memset(&from, 0, sizeof from);
    memcpy(from.job_id, rank_key, 8);
    memcpy(from.rank, rank_key + 8, 4);
    from.kind[1] = (uint8_t)kind;
    if ((rc = mdb_cursor_open(w->txn, w->store->series, &c)) != 0)
        return rs__store_err(rc);
    /* Chunks are taken from the front, so after each delete the next one is the first again
     * (re-seek: a cursor's position after a delete is not one to read from). */
    for (;;) {
        k = (MDB_val){sizeof from, &from};
        if ((rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE)) != 0) {
            rc = rc == MDB_NOTFOUND ? 0 : rs__store_err(rc);
            break;
        }
        const struct rs_key_series *key = k.mv_data;
        if (k.mv_size != sizeof *key || memcmp(key, &from, 14) != 0 ||
            rs__be64_get(key->start_ns) >= horizon)
            break;
        if (*budget == 0) {
            *more = true;
            break;
        }
        if (v.mv_size % sizeof(struct rs_kernel_value) != 0) {
            rc = RS_E_CORRUPT;
            goto out;
        }
        /* records from the horizon on stay raw: they go back as a chunk of their own */
        struct rs_kernel_value keep[RS_STORE_CHUNK_BYTES / sizeof(struct rs_kernel_value)];
        size_t n_keep = 0;
        uint64_t keep_start = UINT64_MAX;
        for (size_t off = 0; off < v.mv_size && rc == 0; off += sizeof(struct rs_kernel_value)) {
            struct rs_kernel_value kv;
            memcpy(&kv, (const char *)v.mv_data + off, sizeof kv);
            if (kv.start_ns >= horizon && n_keep < sizeof keep / sizeof keep[0]) {
                keep[n_keep++] = kv;
                keep_start = kv.start_ns < keep_start ? kv.start_ns : keep_start;
                continue;
            }
            struct rs__kwin_sum x = record_sum(kind, &kv, ru->window_ns);
            rc = rs__kwin_sums_add(&sums, &x);
            ru->records++;
            *budget -= *budget > 0;
        }
        if (rc != 0)
            goto out;
        if ((rc = mdb_cursor_del(c, 0)) != 0 ||
            (n_keep > 0 && (rc = rs__store_put_chunk(w, &from, keep_start, keep,
                                                     n_keep * sizeof keep[0])) != 0)) {
            rc = rs__store_err(rc);
            goto out;
        }
        ru->chunks++;
    }
    if (rc != 0)
        goto out;
    rc = rs__kwin_merge(w, rank_key, kind, &sums, &ru->windows);
out:
    mdb_cursor_close(c);
    free(sums.v);
    return rc;
}

static int
rollup_rank(rs_store_write *w, struct rs_store_rollup *ru, const uint8_t *rank_key,
            uint64_t horizon, size_t *budget, bool *more)
{
    int rc = rollup_series(w, ru, rank_key, RS_SERIES_KERNEL, horizon, budget, more);

    if (rc == 0 && !*more)
        rc = rollup_series(w, ru, rank_key, RS_SERIES_MEMCPY, horizon, budget, more);
    return rc;
}

int
rs_store_rollup_step(rs_store_write *w, struct rs_store_rollup *ru, size_t max_records, bool *done)
{
    MDB_cursor *c;
    MDB_val k, v;
    size_t budget = max_records ? max_records : 1;
    int rc = 0, mrc, op;

    *done = false;
    if (ru->window_ns == 0)
        return -EINVAL;
    if ((rc = mdb_cursor_open(w->txn, w->store->ranks, &c)) != 0)
        return rs__store_err(rc);
    k = (MDB_val){sizeof ru->resume, ru->resume}; /* (copied: the cursor may point k elsewhere) */
    op = ru->started ? MDB_SET_RANGE : MDB_FIRST;
    while ((mrc = mdb_cursor_get(c, &k, &v, op)) == 0) {
        uint64_t horizon;
        bool more = false;
        op = MDB_NEXT;
        if (k.mv_size != sizeof(struct rs_key_rank))
            continue; /* the consistency check reports it */
        memcpy(ru->resume, k.mv_data, sizeof ru->resume);
        ru->started = true;
        if ((rc = rs__rollup_horizon(w, ru, &k, &v, &horizon)) != 0 ||
            (horizon > 0 && (rc = rollup_rank(w, ru, ru->resume, horizon, &budget, &more)) != 0) ||
            more)
            break; /* more: this rank goes on in the next transaction */
    }
    mdb_cursor_close(c);
    if (mrc == MDB_NOTFOUND) {
        *done = true;
        return 0;
    }
    return mrc != 0 ? rs__store_err(mrc) : rc;
}
