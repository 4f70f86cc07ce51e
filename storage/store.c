/* Store lifecycle: environment open/close, named databases, format check, and the read/write
 * transaction handles (see store.h). */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/hash.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
rs__store_err(int mdb_rc)
{
    switch (mdb_rc) {
    case MDB_SUCCESS:
        return 0;
    case MDB_NOTFOUND:
        return RS_E_NOT_FOUND;
    case MDB_KEYEXIST:
        return -EEXIST;
    case MDB_MAP_FULL:
    case MDB_TXN_FULL:
    case MDB_READERS_FULL:
        return RS_E_FULL;
    case MDB_INVALID:
    case MDB_VERSION_MISMATCH:
    case MDB_CORRUPTED:
    case MDB_PAGE_NOTFOUND:
    case MDB_INCOMPATIBLE:
    case MDB_BAD_VALSIZE:
        return RS_E_CORRUPT;
    default: /* LMDB passes system errors through as positive errno values */
        return mdb_rc > 0 && mdb_rc < 4096 ? -mdb_rc : RS_E_STORE;
    }
}

static bool
format_is(const MDB_val *v, const char *format)
{
    return v->mv_size == strlen(format) && memcmp(v->mv_data, format, v->mv_size) == 0;
}

/* A writer records the key of every job that has none yet (a store of format 4 or older). */
static int
index_jobs(rs_store *s)
{
    MDB_txn *txn;
    int rc = rs__store_err(mdb_txn_begin(s->env, NULL, 0, &txn));

    if (rc != 0)
        return rc;
    if ((rc = rs__store_index_jobs(txn, s)) != 0) {
        mdb_txn_abort(txn);
        return rc;
    }
    return rs__store_err(mdb_txn_commit(txn));
}

/* Creates the named databases and checks (or writes) the format marker; *old_format is set for a
 * format-1 store (to be migrated), which keep_format refuses without writing anything. */
static int
open_dbs(rs_store *s, bool keep_format, bool *old_format)
{
    static const char format[] = RS_STORE_FORMAT;
    MDB_txn *txn;
    MDB_val k = {5, "format"}, v;
    int rc = rs__store_err(mdb_txn_begin(s->env, NULL, 0, &txn));

    if (rc != 0)
        return rc;
    if ((rc = rs__store_err(mdb_dbi_open(txn, "meta", MDB_CREATE, &s->meta))) != 0)
        goto out;
    rc = rs__store_err(mdb_get(txn, s->meta, &k, &v));
    if (rc == RS_E_NOT_FOUND) {
        /* A new store must be empty; an LMDB env of someone else's has other databases. */
        MDB_cursor *c;
        MDB_val mk, mv;
        MDB_dbi main_db;
        if ((rc = rs__store_err(mdb_dbi_open(txn, NULL, 0, &main_db))) != 0 ||
            (rc = rs__store_err(mdb_cursor_open(txn, main_db, &c))) != 0)
            goto out;
        /* (the first MDB_NEXT of a cursor not yet positioned reads the first entry) */
        while (mdb_cursor_get(c, &mk, &mv, MDB_NEXT) == 0) {
            if (!(mk.mv_size == 4 && memcmp(mk.mv_data, "meta", 4) == 0)) {
                mdb_cursor_close(c);
                rc = RS_E_CORRUPT; /* someone else's */
                goto out;
            }
        }
        mdb_cursor_close(c);
        v.mv_size = sizeof format - 1;
        v.mv_data = (void *)format;
        if ((rc = rs__store_err(mdb_put(txn, s->meta, &k, &v, 0))) != 0)
            goto out;
    } else if (rc != 0) {
        goto out;
    } else if (format_is(&v, RS_STORE_FORMAT_1)) {
        *old_format = true;
        if (keep_format) {
            rc = RS_E_VERSION;
            goto out;
        }
    } else if (format_is(&v, RS_STORE_FORMAT_2) || format_is(&v, RS_STORE_FORMAT_3) ||
               format_is(&v, RS_STORE_FORMAT_4) || format_is(&v, RS_STORE_FORMAT_5) ||
               format_is(&v, RS_STORE_FORMAT_6) || format_is(&v, RS_STORE_FORMAT_7)) {
        /* formats 2 - 7 read as they are; a writer marks the store 8 (format 7: jobs without
         * running totals answer by scans; a format-7 server would write batches without them), since windows name kernels
         * by number, agent windows go to awin, jobs have recorded keys and deleting a job must
         * remove its gpu_ranks, verdicts and captures entries from now on (keys.h) — but not
         * keep_format (--check, --compact-to), while an older server may still be serving the
         * store (the empty kwin_names, awin, job_keys, job_ids, gpu_ranks, verdicts and captures
         * below are no change to it) */
        v.mv_size = sizeof format - 1;
        v.mv_data = (void *)format;
        if (!keep_format && (rc = rs__store_err(mdb_put(txn, s->meta, &k, &v, 0))) != 0)
            goto out;
    } else if (!format_is(&v, RS_STORE_FORMAT)) {
        rc = RS_E_CORRUPT; /* another format: a newer one, or not ours */
        goto out;
    }
    if ((rc = mdb_dbi_open(txn, "dedup", MDB_CREATE, &s->dedup)) ||
        (rc = mdb_dbi_open(txn, "jobs", MDB_CREATE, &s->jobs)) ||
        (rc = mdb_dbi_open(txn, "ranks", MDB_CREATE, &s->ranks)) ||
        (rc = mdb_dbi_open(txn, "series", MDB_CREATE, &s->series)) ||
        (rc = mdb_dbi_open(txn, "steps", MDB_CREATE, &s->steps)) ||
        (rc = mdb_dbi_open(txn, "coll_blocks", MDB_CREATE, &s->colls)) ||
        (rc = mdb_dbi_open(txn, "strings", MDB_CREATE, &s->strings)) ||
        (rc = mdb_dbi_open(txn, "stepsum", MDB_CREATE, &s->stepsum)) ||
        (rc = mdb_dbi_open(txn, "kwin", MDB_CREATE, &s->kwin)) ||
        (rc = mdb_dbi_open(txn, "kwin_names", MDB_CREATE, &s->names)) ||
        (rc = mdb_dbi_open(txn, "awin", MDB_CREATE, &s->awin)) ||
        (rc = mdb_dbi_open(txn, "job_keys", MDB_CREATE, &s->job_keys)) ||
        (rc = mdb_dbi_open(txn, "job_ids", MDB_CREATE, &s->job_ids)) ||
        (rc = mdb_dbi_open(txn, "gpu_ranks", MDB_CREATE, &s->gpu_ranks)) ||
        (rc = mdb_dbi_open(txn, "verdicts", MDB_CREATE, &s->verdicts)) ||
        (rc = mdb_dbi_open(txn, "captures", MDB_CREATE, &s->captures)) ||
        (rc = mdb_dbi_open(txn, "hangs", MDB_CREATE, &s->hangs)) ||
        (rc = mdb_dbi_open(txn, "frame_seqs", MDB_CREATE, &s->frame_seqs)) ||
        (rc = mdb_dbi_open(txn, "job_top", MDB_CREATE, &s->jtop))) {
        rc = rs__store_err(rc);
        goto out;
    }
    return rs__store_err(mdb_txn_commit(txn));
out:
    mdb_txn_abort(txn);
    return rc;
}

static void
store_free(rs_store *s)
{
    rs__known_fini(&s->known_strings);
    rs__numbers_fini(&s->numbers);
    free(s->made_dir);
    free(s->dir);
    free(s);
}

int
rs_store_open(const char *dir, const struct rs_store_options *opts, rs_store **out)
{
    struct rs_store_options o = opts ? *opts : (struct rs_store_options){0};
    struct stat st;
    rs_store *s;
    int rc;

    s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->lock_fd = -1;
    s->known_strings.secret = rs_random_u64(); /* fingerprints no name can be crafted against */
    if (!(s->dir = strdup(dir))) {
        free(s);
        return -ENOMEM;
    }
    rs__store_note_files(s);
    if ((rc = rs_fs_mkdir_p_made(dir, 0700, &s->made_dir)) != 0) {
        store_free(s);
        return rc;
    }
    if (stat(dir, &st) != 0)
        rc = -errno;
    else if (!S_ISDIR(st.st_mode))
        rc = -ENOTDIR;
    else if (o.exclusive)
        rc = rs__store_lock(s); /* before LMDB creates or touches anything */
    if (rc != 0)
        goto fail_unmake;
    if ((rc = mdb_env_create(&s->env)) != 0) {
        rc = rs__store_err(rc);
        goto fail_unmake;
    }
    s->map_bytes = o.map_size ? o.map_size : 256ull << 30;
    mdb_env_set_mapsize(s->env, (size_t)((double)s->map_bytes * RS_STORE_HEADROOM));
    mdb_env_set_maxdbs(s->env, 32);
    mdb_env_set_maxreaders(s->env, o.max_readers ? o.max_readers : 126);
    rc = mdb_env_open(s->env, dir, MDB_NOTLS | (o.sync_metadata ? 0 : MDB_NOMETASYNC), 0600);
    if (rc != 0) {
        rc = rs__store_err(rc);
        goto fail;
    }
    int dead;
    mdb_reader_check(s->env, &dead);
    bool old_format = false;
    if ((rc = open_dbs(s, o.keep_format, &old_format)) != 0)
        goto fail;
    if (old_format && (rc = rs__store_migrate_1(s, &o)) != 0)
        goto fail;
    if (!o.keep_format && (rc = index_jobs(s)) != 0)
        goto fail;
    *out = s;
    return 0;
fail:
    mdb_env_close(s->env);
fail_unmake:
    rs__store_unmake(s);
    store_free(s);
    return rc;
}

void
rs_store_close(rs_store *s)
{
    if (!s)
        return;
    mdb_env_close(s->env);
    if (s->lock_fd >= 0)
        close(s->lock_fd);
    store_free(s);
}

void
rs_store_close_discard(rs_store *s)
{
    if (!s)
        return;
    mdb_env_close(s->env);
    rs__store_unmake(s);
    store_free(s);
}

int
rs_store_write_begin(rs_store *s, rs_store_write **out)
{
    rs_store_write *w = calloc(1, sizeof *w);
    int rc;

    if (!w)
        return -ENOMEM;
    w->store = s;
    if ((rc = mdb_txn_begin(s->env, NULL, 0, &w->txn)) != 0) {
        free(w);
        return rs__store_err(rc);
    }
    *out = w;
    return 0;
}

int
rs_store_write_commit(rs_store_write *w)
{
    int rc = rs__jtop_flush(w); /* the job totals of the transaction, merged once */

    if (rc != 0) {
        rs_store_write_abort(w);
        return rc;
    }
    rc = mdb_txn_commit(w->txn);

    for (size_t i = 0; rc == 0 && i < w->n_fresh; i++)
        rs__known_add(&w->store->known_strings, w->fresh[i].fp, w->fresh[i].id);
    if (rc == 0)
        rs__numbers_committed(w);
    free(w->fresh);
    free(w->new_numbers);
    free(w);
    return rs__store_err(rc);
}

void
rs_store_write_abort(rs_store_write *w)
{
    if (!w)
        return;
    mdb_txn_abort(w->txn);
    rs__jtop_forget(w);
    free(w->fresh);
    free(w->new_numbers); /* never committed: forgotten */
    free(w);
}

int
rs_store_compact(rs_store *s, const char *dest_dir)
{
    char path[4096];
    struct stat st;
    int rc;

    if ((rc = rs_fs_mkdir_p_private(dest_dir)) != 0)
        return rc;
    snprintf(path, sizeof path, "%s/data.mdb", dest_dir);
    if (stat(path, &st) == 0)
        return -EEXIST;
    if ((rc = rs__store_err(mdb_env_copy2(s->env, dest_dir, MDB_CP_COMPACT))) != 0)
        return rc;
    /* LMDB creates the copy 0644 (less the umask): the store's data is its owner's (security.md) */
    return chmod(path, 0600) == 0 ? 0 : -errno;
}

int
rs_store_reader_check(rs_store *s, int *cleared)
{
    return rs__store_err(mdb_reader_check(s->env, cleared));
}

/* Pages used by the file so far (the high-water mark), and the page size. */
static int
high_water(rs_store *s, uint64_t *pages, uint64_t *page_size)
{
    MDB_envinfo info;
    MDB_stat st;
    int rc;

    if ((rc = mdb_env_info(s->env, &info)) != 0 || (rc = mdb_env_stat(s->env, &st)) != 0)
        return rs__store_err(rc);
    *pages = (uint64_t)info.me_last_pgno + 1;
    *page_size = st.ms_psize;
    return 0;
}

/* Pages on LMDB's free list, which new writes reuse. */
static int
free_pages(rs_store *s, uint64_t *out)
{
    MDB_txn *txn;
    MDB_cursor *c;
    MDB_val k, v;
    int rc;

    *out = 0;
    if ((rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn)) != 0)
        return rs__store_err(rc);
    /* LMDB's free-page database is dbi 0: each value is a list of page numbers, count first */
    if ((rc = mdb_cursor_open(txn, 0, &c)) == 0) {
        while ((rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) == 0)
            if (v.mv_size >= sizeof(size_t))
                *out += *(const size_t *)v.mv_data;
        mdb_cursor_close(c);
    }
    mdb_txn_abort(txn);
    return rc == MDB_NOTFOUND ? 0 : rs__store_err(rc);
}

int
rs_store_space_get(rs_store *s, struct rs_store_space *out)
{
    uint64_t pages = 0, page_size = 0, unused = 0;
    int rc;

    if ((rc = high_water(s, &pages, &page_size)) != 0 || (rc = free_pages(s, &unused)) != 0)
        return rc;
    out->map_bytes = s->map_bytes; /* without the headroom kept for deletions */
    out->file_bytes = pages * page_size;
    out->data_bytes = (pages > unused ? pages - unused : 0) * page_size;
    return 0;
}

int
rs_store_used_bytes(rs_store *s, uint64_t *out)
{
    uint64_t pages = 0, page_size = 0;
    int rc = high_water(s, &pages, &page_size);

    if (rc == 0)
        *out = pages * page_size;
    return rc;
}

bool
rs_store_full(rs_store *s)
{
    uint64_t pages = 0, page_size = 0, unused = 0;

    if (high_water(s, &pages, &page_size) != 0 || pages * page_size < s->map_bytes)
        return false; /* data <= file < map: no need to count free pages */
    return free_pages(s, &unused) == 0 &&
           (pages > unused ? pages - unused : 0) * page_size >= s->map_bytes;
}

int
rs_store_read_begin(rs_store *s, rs_store_read **out)
{
    rs_store_read *r = calloc(1, sizeof *r);
    int rc;

    if (!r)
        return -ENOMEM;
    r->store = s;
    rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &r->txn);
    if (rc == MDB_READERS_FULL) {
        int dead;
        mdb_reader_check(s->env, &dead); /* reclaim slots of dead processes, then retry once */
        rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &r->txn);
    }
    if (rc != 0) {
        free(r);
        return rs__store_err(rc);
    }
    *out = r;
    return 0;
}

void
rs_store_read_set_deadline(rs_store_read *r, uint64_t deadline_ns)
{
    r->deadline_ns = deadline_ns;
}

int
rs__store_read_expired(const rs_store_read *r)
{
    return r->deadline_ns && rs_clock_mono_ns() > r->deadline_ns ? -ETIMEDOUT : 0;
}

void
rs_store_read_end(rs_store_read *r)
{
    if (!r)
        return;
    mdb_txn_abort(r->txn);
    free(r);
}

int
rs__store_get_fixed(MDB_txn *txn, MDB_dbi dbi, const void *key, size_t klen, void *out,
                    size_t size)
{
    MDB_val k = {klen, (void *)key}, v;
    int rc = rs__store_err(mdb_get(txn, dbi, &k, &v));

    memset(out, 0, size);
    if (rc != 0)
        return rc;
    if (v.mv_size != size)
        return RS_E_CORRUPT;
    memcpy(out, v.mv_data, size);
    return 0;
}
