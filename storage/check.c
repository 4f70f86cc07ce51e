/* The consistency check behind `rankscope-server --check` (see store.h): every key and value of
 * every database, and the references between them. */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/error.h"
#include "common/hash.h"
#include "proto/wire.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct job_ref {
    uint64_t id;
    uint32_t n_ranks, ranks_found;
};

#define MAX_DBI 64 /* LMDB's handles are small integers: the store opens RS_STORE_DBS + 2 */

struct check {
    rs_store_read *r;
    struct rs_store_check_report *rep;
    struct job_ref *jobs; /* sorted by id */
    size_t n_jobs;
    uint64_t entry_bytes[MAX_DBI];    /* per database handle: its entries as leaf nodes hold them */
    struct rs__number_cache *numbers; /* the kernel names of numbered windows */
    /* the rank of the last agent window checked (a rank's windows of a block come in a row):
     * its key, whether it exists, its longest agent window */
    struct rs_key_rank awin_rank;
    bool awin_rank_known, awin_rank_found;
    uint64_t awin_rank_longest_ns;
    struct rs_key_rank verdict_rank; /* the rank of the last verdict checked, and its count */
    uint32_t verdict_rank_n;
    uint8_t hang_job[8]; /* the job of the last hang checked, and its count */
    uint32_t hang_job_n;
};

/* LMDB's node header in a leaf page (lmdb.h: NODESIZE), and the page index slot per node. */
#define NODE_OVERHEAD (8 + 2)

static void
problem(struct check *c, const char *fmt, ...)
{
    va_list ap;

    if (c->rep->problems++ == 0) {
        va_start(ap, fmt);
        vsnprintf(c->rep->first_problem, sizeof c->rep->first_problem, fmt, ap);
        va_end(ap);
    }
}

static int
by_id(const void *a, const void *b)
{
    uint64_t x = ((const struct job_ref *)a)->id, y = ((const struct job_ref *)b)->id;
    return x < y ? -1 : x > y;
}

static struct job_ref *
find_job(struct check *c, const uint8_t *be_id)
{
    struct job_ref key = {rs__be64_get(be_id), 0, 0};
    return c->n_jobs ? bsearch(&key, c->jobs, c->n_jobs, sizeof key, by_id) : NULL;
}

/* Calls visit for every entry of a database. */
static int
walk(struct check *c, MDB_dbi dbi, void (*visit)(struct check *, const MDB_val *, const MDB_val *))
{
    MDB_cursor *cur;
    MDB_val k, v;
    int rc = mdb_cursor_open(c->r->txn, dbi, &cur), op = MDB_FIRST;

    if (rc != 0)
        return rs__store_err(rc);
    while ((rc = mdb_cursor_get(cur, &k, &v, op)) == 0) {
        op = MDB_NEXT;
        visit(c, &k, &v);
        if (dbi < MAX_DBI)
            c->entry_bytes[dbi] += k.mv_size + v.mv_size + NODE_OVERHEAD;
    }
    mdb_cursor_close(cur);
    return rc == MDB_NOTFOUND ? 0 : rs__store_err(rc);
}

static void
visit_job(struct check *c, const MDB_val *k, const MDB_val *v)
{
    char name[RS_WIRE_MAX_JOB_LEN + 1];
    struct rs_job_value jv;

    c->rep->jobs++;
    if (k->mv_size == 0 || k->mv_size > RS_WIRE_MAX_JOB_LEN || v->mv_size != sizeof jv) {
        problem(c, "jobs: entry with a %zu-byte key and a %zu-byte value", k->mv_size, v->mv_size);
        return;
    }
    memcpy(name, k->mv_data, k->mv_size);
    name[k->mv_size] = '\0';
    memcpy(&jv, v->mv_data, sizeof jv);
    if (!rs_wire_job_valid(name) || jv.version != RS_VALUE_VERSION ||
        (jv.last_ns && jv.last_ns < jv.first_ns)) {
        problem(c, "jobs: bad entry for job '%.128s'", name);
        return;
    }
    struct job_ref *j = realloc(c->jobs, (c->n_jobs + 1) * sizeof *j);
    if (!j) {
        problem(c, "out of memory");
        return;
    }
    c->jobs = j;
    uint64_t id = 0;
    int rc = rs__store_job_key(c->r->txn, c->r->store, name, &id);
    if (rc != 0) {
        problem(c, "jobs: no key for job '%.128s': %s", name, rs_strerror(rc));
        return;
    }
    /* the way back: job_ids names this job (a store of format 4, read as it is, has none) */
    uint8_t be[RS_KEY_JOB_PREFIX];
    MDB_val ik = {sizeof be, be}, iv;
    rs__be64_put(be, id);
    if (mdb_get(c->r->txn, c->r->store->job_ids, &ik, &iv) == 0 &&
        !(iv.mv_size == k->mv_size && memcmp(iv.mv_data, name, iv.mv_size) == 0))
        problem(c, "job_ids: the key of job '%.128s' names another job", name);
    c->jobs[c->n_jobs++] = (struct job_ref){id, jv.n_ranks, 0};
}

static void
visit_rank(struct check *c, const MDB_val *k, const MDB_val *v)
{
    const struct rs_key_rank *key = k->mv_data;
    struct rs_rank_value rv;
    struct job_ref *j;

    c->rep->ranks++;
    if (k->mv_size != sizeof *key || v->mv_size != sizeof rv) {
        problem(c, "ranks: entry of %zu/%zu bytes", k->mv_size, v->mv_size);
        return;
    }
    memcpy(&rv, v->mv_data, sizeof rv);
    if (!(j = find_job(c, key->job_id)))
        problem(c, "ranks: rank %u of a job that does not exist", rs__be32_get(key->rank));
    else
        j->ranks_found++;
    if (rv.version != RS_VALUE_VERSION || rv.rank != rs__be32_get(key->rank) ||
        memchr(rv.host, 0, sizeof rv.host) == NULL ||
        memchr(rv.gpu_uuid, 0, sizeof rv.gpu_uuid) == NULL)
        problem(c, "ranks: bad value for rank %u", rs__be32_get(key->rank));
}

/* A rolled-up GPU window (keys.h RS_SERIES_GPU_WINDOW): one struct rs_gpu_window, of readings
 * taken in its window (the key's start, a multiple of the rollup window). */
static void
visit_gpu_window(struct check *c, const MDB_val *k, const MDB_val *v)
{
    const struct rs_key_series *key = k->mv_data;
    struct rs_gpu_window w;

    if (!find_job(c, key->job_id))
        problem(c, "series: a GPU window of a job that does not exist");
    if (v->mv_size != sizeof w) {
        problem(c, "series: %zu-byte GPU window", v->mv_size);
        return;
    }
    memcpy(&w, v->mv_data, sizeof w);
    if (w.version != RS_GPU_WINDOW_VERSION || w.samples == 0 || w.last_ns < w.first_ns ||
        w.first_ns < rs__be64_get(key->start_ns) || rs__be32_get(key->uniq) != 0 ||
        w.n_sm > w.samples || w.n_reasons > w.samples || w.n_power > w.samples) {
        problem(c, "series: bad GPU window");
        return;
    }
    c->rep->gpu_windows++;
    c->rep->gpu_window_readings += w.samples;
    c->rep->gpu_window_entry_bytes += k->mv_size + v->mv_size + NODE_OVERHEAD;
}

static void
visit_series(struct check *c, const MDB_val *k, const MDB_val *v)
{
    const struct rs_key_series *key = k->mv_data;
    size_t size;

    c->rep->series_chunks++;
    if (k->mv_size != sizeof *key) {
        problem(c, "series: %zu-byte key", k->mv_size);
        return;
    }
    switch (key->kind[1]) {
    case RS_SERIES_KERNEL:
        size = sizeof(struct rs_kernel_value);
        break;
    case RS_SERIES_MEMCPY:
        size = sizeof(struct rs_memcpy_value);
        break;
    case RS_SERIES_STALL:
        size = sizeof(struct rs_stall_value);
        break;
    case RS_SERIES_GPU:
        size = sizeof(struct rs_gpu_value);
        break;
    case RS_SERIES_GPU_WINDOW:
        visit_gpu_window(c, k, v);
        return;
    default:
        problem(c, "series: unknown kind %u", key->kind[1]);
        return;
    }
    if (!find_job(c, key->job_id))
        problem(c, "series: chunk of a job that does not exist");
    if (v->mv_size == 0 || v->mv_size % size != 0 || v->mv_size > RS_STORE_CHUNK_BYTES) {
        problem(c, "series: %zu-byte chunk of kind %u", v->mv_size, key->kind[1]);
        return;
    }
    if (key->kind[1] == RS_SERIES_GPU) {
        c->rep->gpu_readings += v->mv_size / size;
        c->rep->gpu_entry_bytes += k->mv_size + v->mv_size + NODE_OVERHEAD;
        return;
    }
    if (key->kind[1] == RS_SERIES_STALL)
        return;
    for (size_t off = 0; off < v->mv_size; off += size) {
        uint64_t t[2]; /* kernel and memcpy values both start with start_ns, end_ns */
        memcpy(t, (const char *)v->mv_data + off, sizeof t);
        if (t[1] < t[0]) {
            problem(c, "series: record ending before it starts");
            return;
        }
    }
}

/* A window entry: counts at least one launch, none longer than all together; copies of a known
 * kind. */
static int
check_kwin_entry(void *arg, const struct rs__kwin_entry *e)
{
    const uint8_t *kind = arg;
    bool copy = !rs__kwin_names_kernels(*kind);
    bool ok = e->count > 0 && e->max_ns <= e->total_ns && (!copy || e->key < RS_COPY_KIND_COUNT);
    return ok ? 0 : RS_E_CORRUPT;
}

/* A window part of kwin or awin (db): of a job that exists, a known kind, a value that decodes. */
static void
check_window(struct check *c, const char *db, const uint8_t *job_id, const uint8_t *kind,
             const MDB_val *v)
{
    struct rs_kwin_header h;
    uint64_t window_ns;

    if (!find_job(c, job_id))
        problem(c, "%s: window of a job that does not exist", db);
    memcpy(&h, v->mv_data, sizeof h);
    bool known =
        kind[0] == 0 && (kind[1] == RS_KWIN_KERNEL || kind[1] == RS_KWIN_MEMCPY ||
                         kind[1] == RS_KWIN_AGENT_KERNEL || kind[1] == RS_KWIN_AGENT_MEMCPY);
    const struct rs__kwin_keys keys = {rs__numbers_hash_in_read, c->numbers};
    if (!known || rs__kwin_value_decode(&keys, kind[1], v->mv_data, v->mv_size, &window_ns,
                                        check_kwin_entry, (void *)&kind[1]) != 0)
        problem(c, "%s: bad window value (%u entries in %zu bytes)", db, h.n, v->mv_size);
}

static bool
window_sizes_ok(struct check *c, const char *db, const MDB_val *k, size_t key_size,
                const MDB_val *v)
{
    if (k->mv_size == key_size && v->mv_size >= sizeof(struct rs_kwin_header) &&
        v->mv_size <= RS_STORE_CHUNK_BYTES)
        return true;
    problem(c, "%s: entry of %zu/%zu bytes", db, k->mv_size, v->mv_size);
    return false;
}

static void
visit_kwin(struct check *c, const MDB_val *k, const MDB_val *v)
{
    const struct rs_key_kwin *key = k->mv_data;

    c->rep->kernel_windows++;
    if (window_sizes_ok(c, "kwin", k, sizeof *key, v))
        check_window(c, "kwin", key->job_id, key->kind, v);
}

/* Agent windows only, each in the block of its start. */
static void
visit_awin(struct check *c, const MDB_val *k, const MDB_val *v)
{
    const struct rs_key_awin *key = k->mv_data;

    c->rep->kernel_windows++;
    if (!window_sizes_ok(c, "awin", k, sizeof *key, v))
        return;
    struct rs_key_rank rk;
    memcpy(rk.job_id, key->job_id, sizeof rk.job_id);
    memcpy(rk.rank, key->rank, sizeof rk.rank);
    if (!c->awin_rank_known || memcmp(&rk, &c->awin_rank, sizeof rk) != 0) {
        MDB_val rkv = {sizeof rk, &rk}, rv;
        struct rs_rank_value rank;
        c->awin_rank = rk;
        c->awin_rank_known = true;
        c->awin_rank_found =
            mdb_get(c->r->txn, c->r->store->ranks, &rkv, &rv) == 0 && rv.mv_size == sizeof rank;
        if (c->awin_rank_found) {
            memcpy(&rank, rv.mv_data, sizeof rank);
            c->awin_rank_longest_ns = rs__longest_agent_window_ns(&rank);
        }
    }
    struct rs_kwin_header h;
    memcpy(&h, v->mv_data, sizeof h);
    if (!c->awin_rank_found)
        problem(c, "awin: window of a rank that does not exist");
    else if (c->awin_rank_longest_ns && h.window_ns > c->awin_rank_longest_ns) /* overlap scans
                                                                                   miss it */
        problem(c, "awin: a window longer than its rank's longest (%llu s)",
                (unsigned long long)(c->awin_rank_longest_ns / 1000000000u));
    if (rs__be32_get(key->block) != rs__awin_block(rs__be64_get(key->start_ns)))
        problem(c, "awin: window in block %u, not in the block of its start",
                rs__be32_get(key->block));
    if (key->kind[0] != 0 ||
        (key->kind[1] != RS_KWIN_AGENT_KERNEL && key->kind[1] != RS_KWIN_AGENT_MEMCPY))
        problem(c, "awin: window of kind %u, not an agent's", rs__be16_get(key->kind));
    else
        check_window(c, "awin", key->job_id, key->kind, v);
}

static void
visit_step(struct check *c, const MDB_val *k, const MDB_val *v)
{
    struct rs_step_record sr;

    c->rep->steps++;
    if (k->mv_size != sizeof(struct rs_key_step) || !rs__step_value_read(v, &sr)) {
        problem(c, "steps: entry of %zu/%zu bytes", k->mv_size, v->mv_size);
        return;
    }
    if (sr.end_ns < sr.start_ns || !find_job(c, k->mv_data) ||
        (sr.measured && !rs_step_metrics_valid(&sr.metrics, sr.end_ns - sr.start_ns)))
        problem(c, "steps: bad step");
}

static void
visit_stepsum(struct check *c, const MDB_val *k, const MDB_val *v)
{
    struct rs_stepsum_value sv;

    c->rep->step_summaries++;
    if (k->mv_size != sizeof(struct rs_key_step) || v->mv_size != sizeof sv) {
        problem(c, "stepsum: entry of %zu/%zu bytes", k->mv_size, v->mv_size);
        return;
    }
    memcpy(&sv, v->mv_data, sizeof sv);
    uint64_t len = sv.end_ns - sv.start_ns;
    if (sv.version != RS_VALUE_VERSION || sv.end_ns < sv.start_ns || sv.compute_ns > len ||
        sv.idle_ns > len || sv.host_gap_ns > len || !find_job(c, k->mv_data))
        problem(c, "stepsum: bad step summary");
}

static void
visit_coll(struct check *c, const MDB_val *k, const MDB_val *v)
{
    const struct rs_key_coll *key = k->mv_data;
    struct rs_coll_value cv;

    c->rep->collectives++;
    if (k->mv_size != sizeof *key || v->mv_size != sizeof cv) {
        problem(c, "colls: entry of %zu/%zu bytes", k->mv_size, v->mv_size);
        return;
    }
    memcpy(&cv, v->mv_data, sizeof cv);
    if (cv.end_ns < cv.start_ns || key->op[0] >= RS_COLL_OP_COUNT ||
        key->seq_in_block[0] >= RS_COLL_BLOCK_SEQS || !find_job(c, key->job_id))
        problem(c, "colls: bad instance");
}

static void
visit_string(struct check *c, const MDB_val *k, const MDB_val *v)
{
    uint64_t h = rs_hash_fnv1a64(v->mv_data, v->mv_size);
    unsigned i = 0;

    c->rep->strings++;
    if (k->mv_size == sizeof(struct rs_key_string))
        while (i < RS_KEY_PROBES && rs__be64_get(k->mv_data) != h + i * RS_KEY_PROBE_STEP)
            i++;
    if (k->mv_size != sizeof(struct rs_key_string) || i == RS_KEY_PROBES)
        problem(c, "strings: a name whose key is neither its hash nor a probe from it");
}

/* Numbers are dense from 0, and each names a string the store holds. */
static void
visit_name_number(struct check *c, const MDB_val *k, const MDB_val *v)
{
    struct rs_key_string key;
    MDB_val sk = {sizeof key, &key}, sv;

    if (k->mv_size != sizeof(struct rs_key_name_number) || v->mv_size != 8 ||
        rs__be32_get(k->mv_data) != c->rep->name_numbers++) {
        problem(c, "kwin_names: entry of %zu/%zu bytes, or a number out of sequence", k->mv_size,
                v->mv_size);
        return;
    }
    memcpy(key.hash, v->mv_data, 8);
    if (mdb_get(c->r->txn, c->r->store->strings, &sk, &sv) != 0)
        problem(c, "kwin_names: a number for a name the string table does not hold");
}

static void
visit_dedup(struct check *c, const MDB_val *k, const MDB_val *v)
{
    c->rep->batches++;
    if (k->mv_size < sizeof(struct rs_key_dedup) ||
        k->mv_size > sizeof(struct rs_key_dedup) + RS_STORE_PRINCIPAL_MAX ||
        v->mv_size != sizeof(uint64_t))
        problem(c, "dedup: entry of %zu/%zu bytes", k->mv_size, v->mv_size);
}

/* gpu_ranks: a UUID -> a stored rank that reports it (gpu_ranks.c keeps it so). */
static void
visit_gpu_rank(struct check *c, const MDB_val *k, const MDB_val *v)
{
    struct rs_gpu_rank_value e;
    struct rs_key_rank key;
    struct rs_rank_value rv;
    MDB_val rk = {sizeof key, &key}, rval;

    c->rep->gpu_ranks++;
    if (k->mv_size == 0 || k->mv_size >= RS_STORE_UUID_MAX || memchr(k->mv_data, 0, k->mv_size) ||
        v->mv_size != sizeof e) {
        problem(c, "gpu_ranks: entry of %zu/%zu bytes", k->mv_size, v->mv_size);
        return;
    }
    memcpy(&e, v->mv_data, sizeof e);
    rs__be64_put(key.job_id, e.job_id);
    rs__be32_put(key.rank, e.rank);
    if (mdb_get(c->r->txn, c->r->store->ranks, &rk, &rval) != 0 || rval.mv_size != sizeof rv) {
        problem(c, "gpu_ranks: a GPU mapped to rank %u of a job that has no such rank", e.rank);
        return;
    }
    memcpy(&rv, rval.mv_data, sizeof rv);
    if (strnlen(rv.gpu_uuid, sizeof rv.gpu_uuid) != k->mv_size ||
        memcmp(rv.gpu_uuid, k->mv_data, k->mv_size) != 0)
        problem(c, "gpu_ranks: a GPU mapped to rank %u, which reports another GPU", e.rank);
}

/* verdicts: of an existing job, sane times and slowdowns, at most RS_VERDICTS_PER_RANK a rank. */
static void
visit_verdict(struct check *c, const MDB_val *k, const MDB_val *v)
{
    const struct rs_key_verdict *key = k->mv_data;
    struct rs_verdict_value vv;

    c->rep->verdicts++;
    if (k->mv_size != sizeof *key || v->mv_size != sizeof vv) {
        problem(c, "verdicts: entry of %zu/%zu bytes", k->mv_size, v->mv_size);
        return;
    }
    memcpy(&vv, v->mv_data, sizeof vv);
    if (!find_job(c, key->job_id))
        problem(c, "verdicts: a verdict of a job that does not exist");
    if (vv.version != RS_VALUE_VERSION ||
        (vv.cleared_ns && vv.cleared_ns < rs__be64_get(key->detected_ns)) ||
        !(vv.slowdown > 0 && vv.slowdown < 1e9))
        problem(c, "verdicts: bad value for rank %u", rs__be32_get(key->rank));
    if (memcmp(&c->verdict_rank, key, sizeof c->verdict_rank) != 0) {
        memcpy(&c->verdict_rank, key, sizeof c->verdict_rank);
        c->verdict_rank_n = 0;
    }
    if (++c->verdict_rank_n == RS_VERDICTS_PER_RANK + 1)
        problem(c, "verdicts: rank %u has more than %u", rs__be32_get(key->rank),
                RS_VERDICTS_PER_RANK);
}

/* captures: of an existing job, well formed, in a known state, with times in order. */
static void
visit_capture(struct check *c, const MDB_val *k, const MDB_val *v)
{
    struct rs_store_capture cap;

    c->rep->captures++;
    if (!rs__store_capture_value_read(k, v, &cap)) {
        problem(c, "captures: entry of %zu/%zu bytes, or a bad value", k->mv_size, v->mv_size);
        return;
    }
    if (!find_job(c, ((const struct rs_key_capture *)k->mv_data)->job_id))
        problem(c, "captures: capture %llu of a job that does not exist",
                (unsigned long long)cap.id);
    if (cap.state > RS_STORE_CAPTURE_STATE_MAX || cap.requested_ns == 0 ||
        (cap.ended_ns && cap.ended_ns < cap.requested_ns) ||
        (cap.started_ns && cap.ended_ns && cap.ended_ns < cap.started_ns))
        problem(c, "captures: capture %llu has a bad state or times", (unsigned long long)cap.id);
}

/* hangs: of an existing job, sane times and counts, at most RS_HANGS_PER_JOB a job. */
static void
visit_hang(struct check *c, const MDB_val *k, const MDB_val *v)
{
    const struct rs_key_hang *key = k->mv_data;
    struct rs_hang_value hv;

    c->rep->hangs++;
    if (k->mv_size != sizeof *key || v->mv_size != sizeof hv) {
        problem(c, "hangs: entry of %zu/%zu bytes", k->mv_size, v->mv_size);
        return;
    }
    memcpy(&hv, v->mv_data, sizeof hv);
    if (!find_job(c, key->job_id))
        problem(c, "hangs: a hang of a job that does not exist");
    if (hv.version != RS_VALUE_VERSION || memchr(hv.op, 0, sizeof hv.op) == NULL ||
        (hv.cleared_ns && hv.cleared_ns < rs__be64_get(key->raised_ns)))
        problem(c, "hangs: bad value for seq %llu", (unsigned long long)rs__be64_get(key->seq));
    if (memcmp(c->hang_job, key->job_id, sizeof c->hang_job) != 0) {
        memcpy(c->hang_job, key->job_id, sizeof c->hang_job);
        c->hang_job_n = 0;
    }
    if (++c->hang_job_n == RS_HANGS_PER_JOB + 1)
        problem(c, "hangs: a job has more than %u", RS_HANGS_PER_JOB);
}

/* job_top: of an existing job, entries of a known tag and size. */
static void
visit_jtop(struct check *c, const MDB_val *k, const MDB_val *v)
{
    const struct rs_key_jtop *key = k->mv_data;
    size_t want;

    if (k->mv_size != sizeof *key) {
        problem(c, "job_top: key of %zu bytes", k->mv_size);
        return;
    }
    want = key->tag == RS_JTOP_JOB    ? sizeof(struct rs_jtop_job_value)
           : key->tag == RS_JTOP_RANK ? sizeof(struct rs_jtop_rank_value)
           : key->tag <= RS_JTOP_STALL ? sizeof(struct rs_jtop_sum_value)
                                       : 0;
    if (want == 0 || v->mv_size != want)
        problem(c, "job_top: entry of tag %u with %zu bytes", key->tag, v->mv_size);
    else if (!find_job(c, key->job_id))
        problem(c, "job_top: totals of a job that does not exist");
}

/* Where the bytes are: each database's pages, and what its entries take of them. */
static int
db_sizes(struct check *c, struct rs_store_check_report *out)
{
    rs_store_read *r = c->r;
    rs_store *s = r->store;
    const struct {
        const char *name;
        MDB_dbi dbi;
    } dbs[RS_STORE_DBS] = {
        {"series", s->series},     {"kwin", s->kwin},       {"coll_blocks", s->colls},
        {"steps", s->steps},       {"stepsum", s->stepsum}, {"strings", s->strings},
        {"ranks", s->ranks},       {"jobs", s->jobs},       {"dedup", s->dedup},
        {"kwin_names", s->names},  {"meta", s->meta},       {"awin", s->awin},
        {"job_keys", s->job_keys}, {"job_ids", s->job_ids}, {"gpu_ranks", s->gpu_ranks},
        {"verdicts", s->verdicts}, {"captures", s->captures}, {"hangs", s->hangs},
        {"job_top", s->jtop}};
    MDB_stat st;
    int rc;

    for (size_t i = 0; i < RS_STORE_DBS; i++) {
        if ((rc = mdb_stat(r->txn, dbs[i].dbi, &st)) != 0)
            return rs__store_err(rc);
        out->dbs[i].name = dbs[i].name;
        out->dbs[i].bytes =
            (uint64_t)(st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages) * st.ms_psize;
        out->dbs[i].leaf_bytes = (uint64_t)st.ms_leaf_pages * st.ms_psize;
        out->dbs[i].entry_bytes = dbs[i].dbi < MAX_DBI ? c->entry_bytes[dbs[i].dbi] : 0;
    }
    return 0;
}

int
rs_store_check(rs_store *s, struct rs_store_check_report *out)
{
    struct check c = {.rep = out};
    int rc;

    memset(out, 0, sizeof *out);
    if (!(c.numbers = calloc(1, sizeof *c.numbers)))
        return -ENOMEM;
    if ((rc = rs_store_read_begin(s, &c.r)) != 0) {
        free(c.numbers);
        return rc;
    }
    c.numbers->txn = c.r->txn;
    c.numbers->store = s;
    if ((rc = walk(&c, s->jobs, visit_job)) != 0)
        goto out;
    if (c.n_jobs > 1) /* (qsort of a NULL array is undefined even when empty) */
        qsort(c.jobs, c.n_jobs, sizeof *c.jobs, by_id);
    for (size_t i = 1; i < c.n_jobs; i++)
        if (c.jobs[i].id == c.jobs[i - 1].id)
            problem(&c, "jobs: two job names with the same id");
    if ((rc = walk(&c, s->ranks, visit_rank)) || (rc = walk(&c, s->series, visit_series)) ||
        (rc = walk(&c, s->kwin, visit_kwin)) || (rc = walk(&c, s->awin, visit_awin)) ||
        (rc = walk(&c, s->steps, visit_step)) || (rc = walk(&c, s->stepsum, visit_stepsum)) ||
        (rc = walk(&c, s->colls, visit_coll)) || (rc = walk(&c, s->strings, visit_string)) ||
        (rc = walk(&c, s->dedup, visit_dedup)) || (rc = walk(&c, s->names, visit_name_number)) ||
        (rc = walk(&c, s->gpu_ranks, visit_gpu_rank)) ||
        (rc = walk(&c, s->verdicts, visit_verdict)) ||
        (rc = walk(&c, s->captures, visit_capture)) || (rc = walk(&c, s->hangs, visit_hang)) ||
        (rc = walk(&c, s->jtop, visit_jtop)))
        goto out;
    if ((rc = db_sizes(&c, out)) != 0)
        goto out;
    for (size_t i = 0; i < c.n_jobs; i++)
        if (c.jobs[i].ranks_found != c.jobs[i].n_ranks)
            problem(&c, "jobs: a job counts %u ranks but has %u", c.jobs[i].n_ranks,
                    c.jobs[i].ranks_found);
    rc = out->problems ? RS_E_CORRUPT : 0;
out:
    free(c.jobs);
    free(c.numbers);
    rs_store_read_end(c.r);
    return rc;
}
