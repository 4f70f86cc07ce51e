/* Rollups of old kernel and memcpy records into per-window totals (see store.h "Rollups"). One
 * rank at a time: its raw chunks older than the horizon are read and deleted, their records summed
 * per (window, kernel name or copy kind), and each window's totals merged into what `kwin` already
 * holds for it (kwin.c) — all in the caller's transaction; then its agent windows older than the
 * horizon are coarsened the same way, and its NVML readings folded into GPU windows (store.h
 * struct rs_gpu_window). Kernel and memcpy values share a layout
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
_Static_assert(sizeof(((struct rs_store_rollup *)0)->resume) == RS_KEY_RANK_PREFIX &&
                   sizeof(((struct rs_store_rollup *)0)->job_id) == RS_KEY_JOB_PREFIX,
               "store.h's rollup state holds a rank key and a job id");

/* The contribution of one raw value of `kind` (kernel or memcpy, same size) to its window. */
static struct rs__kwin_sum
record_sum(int kind, const struct rs_kernel_value *raw, uint64_t window_ns)
{
    uint64_t dur = raw->end_ns > raw->start_ns ? raw->end_ns - raw->start_ns : 0;
    uint64_t start = raw->start_ns - raw->start_ns % window_ns;
    /* a record that ends past its window makes the window as long as it needs: the window still
     * covers every record it stands for, so a job's span (job_top.c) is the same after the
     * rollup as before */
    if (raw->end_ns > start + window_ns)
        window_ns = raw->end_ns - start;
    struct rs__kwin_sum x = {start, window_ns, raw->name_hash, dur, dur, 0, 1};

    if (kind == RS_SERIES_MEMCPY) {
        struct rs_memcpy_value mv;
        memcpy(&mv, raw, sizeof mv);
        x.key = mv.kind;
        x.bytes = mv.bytes;
    }
    return x;
}

/* The first entry of one (job, rank, kind) — the RS_KEY_KIND_PREFIX bytes `from` starts with — in
 * c's database, whose keys are `key_size` bytes: 0 (k, v set), RS_E_NOT_FOUND (none left) or a
 * storage error. Entries are taken from the front and deleted, so each call seeks again (a
 * cursor's position after a delete is not one to read from). */
static int
first_of_kind(MDB_cursor *c, const void *from, size_t key_size, MDB_val *k, MDB_val *v)
{
    *k = (MDB_val){key_size, (void *)from};
    int rc = mdb_cursor_get(c, k, v, MDB_SET_RANGE);
    if (rc == 0 && (k->mv_size != key_size || memcmp(k->mv_data, from, RS_KEY_KIND_PREFIX) != 0))
        return RS_E_NOT_FOUND;
    return rs__store_err(rc);
}

/* The start of (job, rank, kind) in `series` — rank_key is (job_id, rank) — in *from, and a
 * cursor of the writer's transaction on `series`. */
static int
series_cursor(rs_store_write *w, const uint8_t *rank_key, int kind, struct rs_key_series *from,
              MDB_cursor **c)
{
    memset(from, 0, sizeof *from);
    memcpy(from, rank_key, RS_KEY_RANK_PREFIX); /* job_id, rank */
    from->kind[1] = (uint8_t)kind;
    return rs__store_err(mdb_cursor_open(w->txn, w->store->series, c));
}

/* The next raw chunk of from's (job, rank, kind) to roll up: 0 (k, v set) while one starts
 * before `horizon` and the budget lasts, 1 when none does (*more set when the budget ran out
 * first), or a storage error. */
static int
next_chunk(MDB_cursor *c, const struct rs_key_series *from, uint64_t horizon, size_t budget,
           bool *more, MDB_val *k, MDB_val *v)
{
    int rc = first_of_kind(c, from, sizeof *from, k, v);

    if (rc != 0)
        return rc == RS_E_NOT_FOUND ? 1 : rc;
    if (rs__be64_get(((const struct rs_key_series *)k->mv_data)->start_ns) >= horizon)
        return 1;
    if (budget == 0) {
        *more = true;
        return 1;
    }
    return 0;
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
    if ((rc = series_cursor(w, rank_key, kind, &from, &c)) != 0)
        return rc;
    while ((rc = next_chunk(c, &from, horizon, *budget, more, &k, &v)) == 0) {
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
        if ((rc = rs__store_err(mdb_cursor_del(c, 0))) != 0 ||
            (n_keep > 0 &&
             (rc = rs__store_put_chunk(w, &from, keep_start, keep, n_keep * sizeof keep[0])) != 0))
            goto out;
        ru->chunks++;
    }
    if (rc != 1)
        goto out;
    if ((rc = rs__kwin_merge(w, rank_key, kind, &sums, &ru->windows)) == 0)
        rc = rs__jtop_windows(w, rank_key, rs__kwin_names_kernels(kind), &sums);
out:
    mdb_cursor_close(c);
    free(sums.v);
    return rc;
}

/* Where a rank's agent windows of one kind are: awin, and before it kwin (what a format-3 store
 * keeps there). */
struct agent_windows {
    MDB_cursor *kwin, *awin;
    struct rs_key_kwin from; /* kwin: (job, rank, kind) */
    struct rs__awin_walk walk;
};

/* The first agent window that remains (kwin's first): 0 with k, v, *start and *part set and the
 * cursor *c on it, RS_E_NOT_FOUND when none starts before the walk's `until`, or an error. */
static int
first_agent_window(struct agent_windows *a, MDB_cursor **c, MDB_val *k, MDB_val *v, uint64_t *start,
                   uint16_t *part)
{
    int rc = first_of_kind(a->kwin, &a->from, sizeof a->from, k, v);

    if (rc == 0) {
        const struct rs_key_kwin *key = k->mv_data;
        *c = a->kwin;
        *start = rs__be64_get(key->start_ns);
        *part = rs__be16_get(key->part);
        if (*start < a->walk.until)
            return 0;
    } else if (rc != RS_E_NOT_FOUND) {
        return rc;
    }
    a->walk.on = false; /* (the window before was deleted) */
    if ((rc = rs__awin_next(&a->walk, k, v)) == 0) {
        const struct rs_key_awin *key = k->mv_data;
        *c = a->awin;
        *start = rs__be64_get(key->start_ns);
        *part = rs__be16_get(key->part);
    }
    return rc;
}

/* Coarsens one rank's agent windows of `kind` (keys.h) that start before `horizon` into rollup
 * windows of kind `into`, deleting them, within *budget entries (whole windows). Sets *more when
 * the budget ran out first. An agent window that does not fit in its rollup window (not aligned,
 * or longer) makes that window as long as it needs. */
static int
coarsen_agent_windows(rs_store_write *w, struct rs_store_rollup *ru, const uint8_t *rank_key,
                      int kind, int into, uint64_t horizon, size_t *budget, bool *more)
{
    struct agent_windows a;
    struct rs__kwin_sums sums = {NULL, 0, 0};
    MDB_val k, v;
    int rc;

    *more = false;
    memset(&a, 0, sizeof a);
    a.walk = (struct rs__awin_walk){NULL, rank_key, kind, 0, horizon, 0, false};
    memcpy(&a.from, rank_key, RS_KEY_RANK_PREFIX); /* job_id, rank */
    a.from.kind[1] = (uint8_t)kind;
    if ((rc = mdb_cursor_open(w->txn, w->store->kwin, &a.kwin)) != 0)
        return rs__store_err(rc);
    if ((rc = mdb_cursor_open(w->txn, w->store->awin, &a.awin)) != 0) {
        mdb_cursor_close(a.kwin);
        return rs__store_err(rc);
    }
    a.walk.c = a.awin;
    for (;;) {
        MDB_cursor *c;
        uint64_t start, window_ns = 0;
        uint16_t part; /* (read before the delete) */
        if ((rc = first_agent_window(&a, &c, &k, &v, &start, &part)) != 0) {
            rc = rc == RS_E_NOT_FOUND ? 0 : rc;
            break;
        }
        if (*budget == 0 && part == 0) {
            *more = true;
            break;
        }
        /* its entries go to the rollup window holding its start */
        struct rs__kwin_gather co = {&sums, start - start % ru->window_ns, ru->window_ns};
        size_t before = sums.n;
        const struct rs__kwin_keys keys = {rs__numbers_hash_in_write, w};
        if ((rc = rs__kwin_value_decode(&keys, kind, v.mv_data, v.mv_size, &window_ns,
                                        rs__kwin_gather_entry, &co)) != 0)
            break;
        if (start + window_ns - co.window > co.window_ns) /* (set on the entries just added) */
            for (size_t i = before; i < sums.n; i++)
                sums.v[i].window_ns = start + window_ns - co.window;
        *budget -= sums.n - before < *budget ? sums.n - before : *budget;
        if ((rc = rs__store_err(mdb_cursor_del(c, 0))) != 0)
            break;
        ru->agent_windows += part == 0;
    }
    if (rc == 0 && sums.n > 0 && (rc = rs__kwin_merge(w, rank_key, into, &sums, &ru->windows)) == 0)
        rc = rs__jtop_windows(w, rank_key, rs__kwin_names_kernels(into), &sums);
    mdb_cursor_close(a.kwin);
    mdb_cursor_close(a.awin);
    free(sums.v);
    return rc;
}

/* A rollup window of GPU readings being filled. */
struct gpu_window_sum {
    uint64_t start;
    struct rs_gpu_window w;
};

/* Merges each filled window into the one stored for its start (late readings join it). */
static int
gpu_windows_put(rs_store_write *w, const uint8_t *rank_key, const struct gpu_window_sum *v,
                size_t n)
{
    struct rs_key_series key;
    MDB_val k = {sizeof key, &key}, old;
    int rc = 0;

    memset(&key, 0, sizeof key);
    memcpy(&key, rank_key, RS_KEY_RANK_PREFIX); /* job_id, rank; uniq 0 */
    key.kind[1] = RS_SERIES_GPU_WINDOW;
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct rs_gpu_window merged;
        rs__be64_put(key.start_ns, v[i].start);
        memset(&merged, 0, sizeof merged);
        rc = rs__store_err(mdb_get(w->txn, w->store->series, &k, &old));
        if (rc == 0 && old.mv_size == sizeof merged)
            memcpy(&merged, old.mv_data, sizeof merged); /* (else the check reports it) */
        else if (rc != 0 && rc != RS_E_NOT_FOUND)
            break;
        rs_gpu_window_merge(&merged, &v[i].w);
        MDB_val val = {sizeof merged, &merged};
        rc = rs__store_err(mdb_put(w->txn, w->store->series, &k, &val, 0));
    }
    return rc;
}

/* Rolls up one rank's NVML readings taken before `horizon` into GPU windows of ru->window_ns
 * (store.h struct rs_gpu_window), deleting them, within *budget readings (whole chunks). Sets
 * *more when the budget ran out first. */
static int
rollup_gpu(rs_store_write *w, struct rs_store_rollup *ru, const uint8_t *rank_key, uint64_t horizon,
           size_t *budget, bool *more)
{
    struct rs_key_series from;
    struct gpu_window_sum *sums = NULL;
    size_t n_sums = 0, cap_sums = 0;
    MDB_cursor *c;
    MDB_val k, v;
    int rc;

    *more = false;
    if ((rc = series_cursor(w, rank_key, RS_SERIES_GPU, &from, &c)) != 0)
        return rc;
    while ((rc = next_chunk(c, &from, horizon, *budget, more, &k, &v)) == 0) {
        if (v.mv_size % sizeof(struct rs_gpu_value) != 0 || v.mv_size > RS_STORE_CHUNK_BYTES) {
            rc = RS_E_CORRUPT;
            break;
        }
        /* readings from the horizon on stay raw: they go back as a chunk of their own */
        struct rs_gpu_value keep[RS_STORE_CHUNK_BYTES / sizeof(struct rs_gpu_value)];
        size_t n_keep = 0;
        for (size_t off = 0; off < v.mv_size && rc == 0; off += sizeof keep[0]) {
            struct rs_gpu_value gv;
            struct rs_gpu_sample g;
            memcpy(&gv, (const char *)v.mv_data + off, sizeof gv);
            if (gv.time_ns >= horizon) {
                keep[n_keep++] = gv;
                continue;
            }
            rs__gpu_value_read(&gv, &g);
            uint64_t start = g.time_ns - g.time_ns % ru->window_ns;
            size_t i = n_sums; /* readings come in time order: their window is the last, mostly */
            while (i > 0 && sums[i - 1].start != start)
                i--;
            if (i == 0) {
                if (RS_ARRAY_RESERVE(sums, cap_sums, n_sums, 1) != 0) {
                    rc = -ENOMEM;
                    break;
                }
                i = ++n_sums;
                memset(&sums[i - 1], 0, sizeof sums[i - 1]);
                sums[i - 1].start = start;
            }
            rs_gpu_window_add(&sums[i - 1].w, &g);
            ru->gpu_readings++;
            *budget -= *budget > 0;
        }
        if (rc != 0)
            break;
        if ((rc = rs__store_err(mdb_cursor_del(c, 0))) != 0 ||
            (n_keep > 0 && (rc = rs__store_put_chunk(w, &from, keep[0].time_ns, keep,
                                                     n_keep * sizeof keep[0])) != 0))
            break;
    }
    mdb_cursor_close(c);
    if (rc == 1)
        rc = gpu_windows_put(w, rank_key, sums, n_sums);
    free(sums);
    return rc;
}

/* One rank's raw records before `raw` and agent windows and GPU readings before `windows` (0:
 * none). */
static int
rollup_rank(rs_store_write *w, struct rs_store_rollup *ru, const uint8_t *rank_key, uint64_t raw,
            uint64_t windows, size_t *budget, bool *more)
{
    int rc = 0;

    *more = false;
    if (raw > 0 &&
        (rc = rollup_series(w, ru, rank_key, RS_SERIES_KERNEL, raw, budget, more)) == 0 && !*more)
        rc = rollup_series(w, ru, rank_key, RS_SERIES_MEMCPY, raw, budget, more);
    if (windows > 0 && rc == 0 && !*more &&
        (rc = coarsen_agent_windows(w, ru, rank_key, RS_KWIN_AGENT_KERNEL, RS_KWIN_KERNEL, windows,
                                    budget, more)) == 0 &&
        !*more)
        rc = coarsen_agent_windows(w, ru, rank_key, RS_KWIN_AGENT_MEMCPY, RS_KWIN_MEMCPY, windows,
                                   budget, more);
    if (windows > 0 && rc == 0 && !*more)
        rc = rollup_gpu(w, ru, rank_key, windows, budget, more);
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
        uint64_t raw, windows;
        bool more = false;
        op = MDB_NEXT;
        if (k.mv_size != sizeof(struct rs_key_rank))
            continue; /* the consistency check reports it */
        memcpy(ru->resume, k.mv_data, sizeof ru->resume);
        ru->started = true;
        if ((rc = rs__rollup_horizon(w, ru, &k, &v, &raw, &windows)) != 0 ||
            (rc = rollup_rank(w, ru, ru->resume, raw, windows, &budget, &more)) != 0 || more)
            break; /* more: this rank goes on in the next transaction */
    }
    mdb_cursor_close(c);
    if (mrc == MDB_NOTFOUND) {
        *done = true;
        return 0;
    }
    return mrc != 0 ? rs__store_err(mrc) : rc;
}
