/* Writing agent batches into the store: dedup marker, job and rank summaries, interned strings,
 * chunked kernel/memcpy/stall series, steps and collective instances — all inside the caller's
 * write transaction (see store.h, keys.h). */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/clock.h"
#include "common/error.h"
#include "common/hash.h"
#include "common/span.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Puts one entry: 0, -EEXIST (MDB_NOOVERWRITE and the key is there) or a storage error. */
static int
put(rs_store_write *w, MDB_dbi dbi, const void *key, size_t klen, const void *val, size_t vlen,
    unsigned flags)
{
    MDB_val k = {klen, (void *)key}, v = {vlen, (void *)val};
    return rs__store_err(mdb_put(w->txn, dbi, &k, &v, flags));
}


static void
copy_text(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

struct span {
    uint64_t first, last;
};

static void
span_add(struct span *s, uint64_t start, uint64_t end)
{
    rs_span_cover(&s->first, &s->last, start, end);
}

/* Puts `n` packed values of `size` bytes as chunks of at most RS_STORE_CHUNK_BYTES. start_of(i)
 * gives each record's time; the chunk is keyed by its first record's time. */
static int
put_series(rs_store_write *w, uint64_t job_id, uint32_t rank, enum rs_series_kind kind,
           const void *values, size_t n, size_t size, uint64_t (*start_of)(const void *))
{
    const size_t per_chunk = RS_STORE_CHUNK_BYTES / size;
    struct rs_key_series key;
    int rc;

    rs__be64_put(key.job_id, job_id);
    rs__be32_put(key.rank, rank);
    key.kind[0] = 0;
    key.kind[1] = (uint8_t)kind;
    for (size_t i = 0; i < n; i += per_chunk) {
        size_t cnt = n - i < per_chunk ? n - i : per_chunk;
        const char *chunk = (const char *)values + i * size;
        if ((rc = rs__store_put_chunk(w, &key, start_of(chunk), chunk, cnt * size)) != 0)
            return rc;
    }
    return 0;
}

int
rs__store_put_chunk(rs_store_write *w, const struct rs_key_series *series, uint64_t start,
                    const void *values, size_t len)
{
    struct rs_key_series key = *series;
    int rc;

    rs__be64_put(key.start_ns, start);
    do { /* chunks that start at the same nanosecond differ in uniq */
        rs__be32_put(key.uniq, w->uniq++);
        rc = put(w, w->store->series, &key, sizeof key, values, len, MDB_NOOVERWRITE);
    } while (rc == -EEXIST);
    return rc;
}

static uint64_t
kernel_start(const void *p)
{
    return ((const struct rs_kernel_value *)p)->start_ns;
}

static uint64_t
memcpy_start(const void *p)
{
    return ((const struct rs_memcpy_value *)p)->start_ns;
}

/* The id of name s[0..len) (hash `h` first): where `strings` holds it, or the first free
 * candidate after h (a name whose hash another name holds gets the next one instead of being
 * shown as that name). Stores it and notes it (rs__write_note_string). */
static int
intern_string(rs_store_write *w, const char *s, size_t len, uint64_t h, uint64_t *id)
{
    uint64_t fp = rs__known_fp(&w->store->known_strings, s, len);

    if (rs__known_get(&w->store->known_strings, fp, id))
        return 0; /* committed before: names are never deleted */
    for (unsigned tries = 0; tries < RS_KEY_PROBES; tries++, h += RS_KEY_PROBE_STEP) {
        struct rs_key_string key;
        MDB_val k = {sizeof key, &key}, v;
        rs__be64_put(key.hash, h);
        int rc = rs__store_err(mdb_get(w->txn, w->store->strings, &k, &v));
        if (rc == 0 && !(v.mv_size == len && memcmp(v.mv_data, s, len) == 0))
            continue; /* another name's */
        if (rc != 0 && rc != RS_E_NOT_FOUND)
            return rc;
        if (rc == RS_E_NOT_FOUND &&
            (rc = put(w, w->store->strings, &key, sizeof key, s, len, MDB_NOOVERWRITE)) != 0)
            return rc;
        *id = h;
        return rs__write_note_string(w, fp, h);
    }
    return RS_E_FULL; /* RS_KEY_PROBES names on one chain: not short of an attack on the hash */
}

static int
write_strings(rs_store_write *w, const struct rs_rank_batch *b, uint64_t *hashes)
{
    for (uint32_t i = 0; i < b->n_strings; i++) {
        size_t len = strlen(b->strings[i]);
        uint64_t h = b->string_hashes ? b->string_hashes[i] : rs_hash_fnv1a64(b->strings[i], len);
        int rc;
        if ((rc = intern_string(w, b->strings[i], len, h, &hashes[i])) != 0)
            return rc;
    }
    return 0;
}

/* One total for the merge, counted in the rank's totals (*n, *ns; none when NULL) like the
 * records it stands for; a window's records end by its end, or by when the batch was sent (an
 * open window). */
static int
add_total(struct rs__kwin_sums *sums, const struct rs__kwin_sum *x, uint64_t *n, uint64_t *ns,
          struct span *sp, uint64_t now)
{
    uint64_t end = x->window + x->window_ns;

    if (n) {
        *n += x->count;
        *ns += x->total_ns;
    }
    span_add(sp, x->window, end < now ? end : now);
    return rs__kwin_sums_add(sums, x);
}

/* Keeps the rank's longest agent window (keys.h), in seconds rounded up. */
static void
longest_window(struct rs_rank_value *rv, uint64_t window_ns)
{
    uint64_t s = window_ns / 1000000000u + (window_ns % 1000000000u != 0);
    if (s > rv->longest_agent_window_s)
        rv->longest_agent_window_s = s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

/* Kernel and copy totals (an agent that summarizes) merged into their agent windows (`awin`)
 * (the rollup coarsens them later); they count in the rank's totals like the records they stand
 * for. */
static int
write_totals(rs_store_write *w, uint64_t job_id, const struct rs_rank_batch *b,
             const uint64_t *hashes, struct rs_rank_value *rv, struct span *sp)
{
    struct rs__kwin_sums sums = {NULL, 0, 0};
    uint64_t windows = 0, now = b->clock.realtime_ns ? b->clock.realtime_ns : UINT64_MAX;
    uint8_t rank_key[RS_KEY_RANK_PREFIX];
    int rc = 0;

    rs__be64_put(rank_key, job_id);
    rs__be32_put(rank_key + RS_KEY_JOB_PREFIX, b->identity.rank);
    for (uint32_t i = 0; i < b->n_kernel_totals && rc == 0; i++) {
        const struct rs_kernel_total *t = &b->kernel_totals[i];
        struct rs__kwin_sum x = {t->window_start_ns,
                                 t->window_ns,
                                 hashes[t->name_id],
                                 t->total_ns,
                                 t->max_ns,
                                 0,
                                 t->count};
        rc = add_total(&sums, &x, &rv->n_kernels, &rv->kernel_ns, sp, now);
        longest_window(rv, t->window_ns);
    }
    if (rc == 0 && sums.n > 0)
        rc = rs__kwin_merge(w, rank_key, RS_KWIN_AGENT_KERNEL, &sums, &windows);
    sums.n = 0;
    for (uint32_t i = 0; i < b->n_copy_totals && rc == 0; i++) {
        const struct rs_copy_total *t = &b->copy_totals[i];
        struct rs__kwin_sum x = {t->window_start_ns, t->window_ns, t->kind, t->total_ns,
                                 t->max_ns,          t->bytes,     t->count};
        bool sync = rs_copy_kind_is_host_side(t->kind); /* a host wait: not the rank's copy time */
        rc = add_total(&sums, &x, sync ? NULL : &rv->n_memcpys, sync ? NULL : &rv->memcpy_ns, sp,
                       now);
        longest_window(rv, t->window_ns);
    }
    if (rc == 0 && sums.n > 0)
        rc = rs__kwin_merge(w, rank_key, RS_KWIN_AGENT_MEMCPY, &sums, &windows);
    free(sums.v);
    return rc;
}

static int
write_records(rs_store_write *w, uint64_t job_id, const struct rs_rank_batch *b,
              const uint64_t *hashes, struct rs_rank_value *rv, struct span *sp, bool *replaced)
{
    const uint32_t rank = b->identity.rank;
    size_t most = b->n_kernels;
    void *buf;
    int rc = 0;

    if (b->n_memcpys > most)
        most = b->n_memcpys;
    if (b->n_stalls > most)
        most = b->n_stalls;
    buf = calloc(most ? most : 1, sizeof(struct rs_stall_value)); /* the largest value type */
    if (!buf)
        return -ENOMEM;

    struct rs_kernel_value *kv = buf;
    for (uint32_t i = 0; i < b->n_kernels; i++) {
        const struct rs_kernel_record *k = &b->kernels[i];
        kv[i] = (struct rs_kernel_value){k->start_ns, k->end_ns, hashes[k->name_id], k->stream,
                                         k->device};
        rv->kernel_ns += k->end_ns - k->start_ns;
        span_add(sp, k->start_ns, k->end_ns);
    }
    rv->n_kernels += b->n_kernels;
    if ((rc = put_series(w, job_id, rank, RS_SERIES_KERNEL, kv, b->n_kernels, sizeof *kv,
                         kernel_start)))
        goto out;

    struct rs_memcpy_value *mv = buf;
    for (uint32_t i = 0; i < b->n_memcpys; i++) {
        const struct rs_memcpy_record *m = &b->memcpys[i];
        mv[i] = (struct rs_memcpy_value){m->start_ns, m->end_ns, m->bytes, m->kind, m->stream};
        span_add(sp, m->start_ns, m->end_ns);
        if (rs_copy_kind_is_host_side(m->kind))
            continue; /* a host wait: not the rank's copy time */
        rv->memcpy_ns += m->end_ns - m->start_ns;
        rv->n_memcpys++;
    }
    if ((rc = put_series(w, job_id, rank, RS_SERIES_MEMCPY, mv, b->n_memcpys, sizeof *mv,
                         memcpy_start)))
        goto out;

    struct rs_stall_value *xv = buf;
    for (uint32_t i = 0; i < b->n_stalls; i++) {
        const struct rs_stall_record *x = &b->stalls[i];
        xv[i] =
            (struct rs_stall_value){x->pc_offset,         x->count,     hashes[x->kernel_name_id],
                                    hashes[x->reason_id], x->cubin_crc, 0};
    }
    rv->n_stalls += b->n_stalls;
    if (b->n_stalls) {
        /* Stall counts have no time of their own: key them by the batch's clock reading. */
        struct rs_key_series key;
        const size_t per_chunk = RS_STORE_CHUNK_BYTES / sizeof *xv;
        rs__be64_put(key.job_id, job_id);
        rs__be32_put(key.rank, rank);
        key.kind[0] = 0;
        key.kind[1] = RS_SERIES_STALL;
        for (size_t i = 0; i < b->n_stalls; i += per_chunk) {
            size_t cnt = b->n_stalls - i < per_chunk ? b->n_stalls - i : per_chunk;
            if ((rc = rs__store_put_chunk(w, &key, b->clock.realtime_ns, xv + i,
                                          cnt * sizeof *xv)) != 0)
                goto out;
        }
    }

    for (uint32_t i = 0; i < b->n_collectives; i++) {
        const struct rs_collective_record *c = &b->collectives[i];
        struct rs_key_coll key;
        struct rs_coll_value v = {c->start_ns,        c->end_ns, c->bytes,
                                  hashes[c->name_id], c->stream, c->seq_exact};
        rs__coll_key(&key, job_id, c->comm_hash, (uint8_t)c->op, c->seq, rank);
        /* a record sent again replaces the first (the job's totals stop following it) */
        rc = put(w, w->store->colls, &key, sizeof key, &v, sizeof v, MDB_NOOVERWRITE);
        if (rc == -EEXIST) {
            *replaced = true;
            rc = put(w, w->store->colls, &key, sizeof key, &v, sizeof v, 0);
        }
        if (rc)
            goto out;
        rv->collective_ns += c->end_ns - c->start_ns;
        span_add(sp, c->start_ns, c->end_ns);
    }
    rv->n_collectives += b->n_collectives;

    for (uint32_t i = 0; i < b->n_steps; i++) {
        const struct rs_step_record *s = &b->steps[i];
        const struct rs_step_metrics *m = &s->metrics;
        struct rs_key_step key;
        struct rs_step_measured_value v = {s->start_ns,    s->end_ns,          m->compute_ns,
                                           m->comm_ns,     m->exposed_comm_ns, m->idle_ns,
                                           m->host_gap_ns, m->kernels,         0};
        rs__be64_put(key.job_id, job_id);
        rs__be32_put(key.rank, rank);
        rs__be64_put(key.step, s->step);
        /* without metrics only the times (struct rs_step_value, the start of v); a step reported
         * twice replaces the first and counts once in the summary */
        size_t len = s->measured ? sizeof v : sizeof(struct rs_step_value);
        rc = put(w, w->store->steps, &key, sizeof key, &v, len, MDB_NOOVERWRITE);
        if (rc == 0) {
            rv->n_steps++;
            rv->step_ns += s->end_ns - s->start_ns;
        } else if (rc != -EEXIST ||
                   (rc = put(w, w->store->steps, &key, sizeof key, &v, len, 0)) != 0)
            goto out;
        span_add(sp, s->start_ns, s->end_ns);
    }
    rc = write_totals(w, job_id, b, hashes, rv, sp);
out:
    free(buf);
    return rc;
}

/* What the rank batches of one job in a request change in its `jobs` entry, written once. */
struct job_update {
    const char *job; /* NULL: nothing pending */
    uint32_t world_size, new_ranks;
    struct span sp;
};

static int
put_job_update(rs_store_write *w, struct job_update *u)
{
    struct rs_job_value jv;
    int rc;

    if (!u->job)
        return 0;
    rc = rs__store_get_fixed(w->txn, w->store->jobs, u->job, strlen(u->job), &jv, sizeof jv);
    if (rc != 0 && rc != RS_E_NOT_FOUND)
        return rc;
    jv.version = RS_VALUE_VERSION;
    jv.received_ns = rs_clock_realtime_ns();
    if (u->world_size > jv.world_size)
        jv.world_size = u->world_size;
    jv.n_ranks += u->new_ranks;
    if (u->sp.first && (jv.first_ns == 0 || u->sp.first < jv.first_ns))
        jv.first_ns = u->sp.first;
    if (u->sp.last > jv.last_ns)
        jv.last_ns = u->sp.last;
    const char *job = u->job;
    u->job = NULL;
    return put(w, w->store->jobs, job, strlen(job), &jv, sizeof jv, 0);
}

/* Adds what arrived of one collector's numbered frames (keys.h frame_seqs). */
static int
write_frames(rs_store_write *w, uint64_t job_id, const struct rs_rank_batch *b)
{
    struct rs_key_frames key;
    struct rs_frames_value fv;
    int rc;

    if (!b->frame_seq)
        return 0; /* an older collector: not reported */
    rs__be64_put(key.job_id, job_id);
    rs__be32_put(key.rank, b->identity.rank);
    rs__be64_put(key.collector_id, b->collector_id);
    rc = rs__store_get_fixed(w->txn, w->store->frame_seqs, &key, sizeof key, &fv, sizeof fv);
    if (rc != 0 && rc != RS_E_NOT_FOUND)
        return rc;
    fv.frames += b->frames;
    fv.records += b->frame_records;
    if (b->frame_seq > fv.frame_seq) {
        fv.frame_seq = b->frame_seq;
        fv.records_sent = b->records_sent;
    }
    return put(w, w->store->frame_seqs, &key, sizeof key, &fv, sizeof fv, 0);
}

static int
write_rank_batch(rs_store_write *w, const struct rs_rank_batch *b, struct job_update *u)
{
    const char *job = b->identity.job;
    uint64_t job_id;
    struct rs_rank_value rv;
    struct rs_key_rank rkey;
    struct span sp = {0, 0};
    uint64_t *hashes;
    int rc, new_rank;

    bool job_existed = true, replaced = false;
    MDB_val jk = {strlen(job), (void *)job}, jv;

    /* whether the job has its entry (then it has totals only when a format-8 writer created it:
     * job_top.c); a job new in this request gets its entry after its batches (put_job_update) */
    if ((rc = rs__store_err(mdb_get(w->txn, w->store->jobs, &jk, &jv))) != 0) {
        if (rc != RS_E_NOT_FOUND)
            return rc;
        job_existed = false;
    }
    if ((rc = rs__store_job_intern(w->txn, w->store, job, &job_id)) != 0)
        return rc;
    hashes = calloc(b->n_strings ? b->n_strings : 1, sizeof *hashes);
    if (!hashes)
        return -ENOMEM;
    rs__be64_put(rkey.job_id, job_id);
    rs__be32_put(rkey.rank, b->identity.rank);
    rc = rs__store_get_fixed(w->txn, w->store->ranks, &rkey, sizeof rkey, &rv, sizeof rv);
    if (rc != 0 && rc != RS_E_NOT_FOUND)
        goto out;
    new_rank = rc == RS_E_NOT_FOUND;
    if ((rc = write_strings(w, b, hashes)) ||
        (rc = write_records(w, job_id, b, hashes, &rv, &sp, &replaced)) ||
        (rc = write_frames(w, job_id, b)) ||
        (rc = rs__jtop_rank_batch(w, job_id, b, hashes, job_existed, replaced)))
        goto out;

    rv.version = RS_VALUE_VERSION;
    rv.rank = b->identity.rank;
    rv.local_rank = b->identity.local_rank;
    rv.world_size = b->identity.world_size;
    rv.pid = b->identity.pid;
    copy_text(rv.host, sizeof rv.host, b->identity.host);
    rv.gpu_uuid[sizeof rv.gpu_uuid - 1] = '\0'; /* the UUID it reported before ("" if new) */
    if ((rc = rs__gpu_rank_note(w, rv.gpu_uuid, b->identity.gpu_uuid, job_id, b->identity.rank)) !=
        0)
        goto out;
    copy_text(rv.gpu_uuid, sizeof rv.gpu_uuid, b->identity.gpu_uuid);
    if (sp.first && (rv.first_ns == 0 || sp.first < rv.first_ns))
        rv.first_ns = sp.first;
    if (sp.last > rv.last_ns)
        rv.last_ns = sp.last;
    if (b->dropped_records > rv.dropped_records)
        rv.dropped_records = b->dropped_records; /* cumulative in the collector */
    rv.batches++;
    rv.collector_flags = b->collector_flags;
    copy_text(rv.collector_status, sizeof rv.collector_status, b->collector_status);
    if (b->clock.realtime_ns && b->clock.source_ns)
        rv.clock_offset_ns = (int64_t)(b->clock.realtime_ns - b->clock.source_ns);
    if ((rc = put(w, w->store->ranks, &rkey, sizeof rkey, &rv, sizeof rv, 0)))
        goto out;

    if (u->job && strcmp(u->job, job) != 0 && (rc = put_job_update(w, u)) != 0)
        goto out;
    if (!u->job)
        *u = (struct job_update){job, 0, 0, {0, 0}};
    if (b->identity.world_size > u->world_size)
        u->world_size = b->identity.world_size;
    u->new_ranks += new_rank;
    if (sp.first)
        span_add(&u->sp, sp.first, sp.last);
out:
    free(hashes);
    return rc;
}

int
rs_store_write_batch(rs_store_write *w, const struct rs_agent_batch *b, bool *duplicate)
{
    return rs_store_write_batch_as(w, b, NULL, duplicate);
}

int
rs_store_write_batch_as(rs_store_write *w, const struct rs_agent_batch *b, const char *principal,
                        bool *duplicate)
{
    uint8_t key[sizeof(struct rs_key_dedup) + RS_STORE_PRINCIPAL_MAX];
    size_t plen = principal ? strlen(principal) : 0, klen = sizeof(struct rs_key_dedup) + plen;
    uint64_t now = rs_clock_realtime_ns();
    int rc;

    if (plen > RS_STORE_PRINCIPAL_MAX)
        return RS_E_MALFORMED;
    rs__be64_put(key + offsetof(struct rs_key_dedup, agent_id), b->agent_id);
    rs__be64_put(key + offsetof(struct rs_key_dedup, batch_seq), b->batch_seq);
    memcpy(key + sizeof(struct rs_key_dedup), principal ? principal : "", plen);
    /* Tokens turned on for a store written without them: a batch committed before (its key has
     * no principal) and resent now (with one) is the same batch, not a new one. No one can write
     * a key without a principal while tokens are on, so this reopens no pre-claim. */
    MDB_val bare = {sizeof(struct rs_key_dedup), key}, found;
    if (plen && (rc = mdb_get(w->txn, w->store->dedup, &bare, &found)) != MDB_NOTFOUND) {
        if (rc != 0)
            return rs__store_err(rc);
        *duplicate = true;
        return 0;
    }
    rc = put(w, w->store->dedup, key, klen, &now, sizeof now, MDB_NOOVERWRITE);
    if (rc == -EEXIST) {
        *duplicate = true;
        return 0;
    }
    if (rc != 0)
        return rc;
    w->uniq = (uint32_t)rs_hash_fnv1a64(key, klen);
    struct job_update job = {NULL, 0, 0, {0, 0}};
    for (uint32_t i = 0; i < b->n_ranks; i++)
        if ((rc = write_rank_batch(w, &b->ranks[i], &job)) != 0)
            return rc;
    if ((rc = put_job_update(w, &job)) != 0 || (rc = rs__store_write_gpus(w, b)) != 0)
        return rc;
    *duplicate = false;
    return 0;
}
