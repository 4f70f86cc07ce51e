/* Unit tests of the collective records' block layout (storage/colls.c, keys.h rs_key_coll): scans
 * see every rank of one instance in a row whatever order the ranks sent them in, a time range
 * returns exactly its instances, and a format-1 store (one key per (seq, rank)) is converted on
 * open, also when a crash interrupted a first conversion. */
#include "common/error.h"
#include "storage/keys.h"
#include "storage/store.h"
#include "tests/store_fixture.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COMMS 2
#define OPS 2
#define T0 1000000000000ull /* the job's first collective: 1,000 s */
#define SPACING                                                                                    \
    1000000000ull /* between instances of one (comm, op): 1 s, so a block spans                    \
                   * more than the scans' margin */
#define MAX_SEQS 512

static const char *const names[] = {"nccl_allreduce"};

static uint64_t
start_of(uint64_t seq, uint32_t rank, unsigned op)
{
    return T0 + seq * SPACING + op * 1000 + rank * 100ull; /* rank 0 first in each instance */
}

/* Commits the collectives of `ranks` ranks and seqs [0, seqs) of every (comm, op), each rank
 * sending `per_batch` seqs at a time, the ranks of a round in a shuffled order. */
static void
fill(rs_store *st, uint32_t ranks, uint64_t seqs, uint64_t per_batch, unsigned shuffle_seed)
{
    size_t per_rank = (size_t)per_batch * COMMS * OPS;
    struct rs_collective_record *c = calloc(per_rank, sizeof *c);
    uint32_t *order = calloc(ranks, sizeof *order);

    T_CHECK(c && order);
    for (uint32_t i = 0; i < ranks; i++)
        order[i] = i;
    srand(shuffle_seed);
    for (uint64_t first = 0; first < seqs; first += per_batch) {
        for (uint32_t i = ranks - 1; i > 0; i--) {
            uint32_t j = (uint32_t)rand() % (i + 1), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (uint32_t i = 0; i < ranks; i++) {
            uint32_t rank = order[i];
            size_t n = 0;
            for (uint64_t seq = first; seq < first + per_batch && seq < seqs; seq++)
                for (unsigned comm = 0; comm < COMMS; comm++)
                    for (unsigned op = 0; op < OPS; op++) {
                        uint64_t s = start_of(seq, rank, op);
                        c[n++] = (struct rs_collective_record){
                            s, s + 5000, 1024, 0xc0de0000u + comm, seq, op, 0, 7, true};
                    }
            struct rs_rank_batch rb = {
                .identity = T_IDENTITY_OF("job-c", rank, rank % 8, ranks, "h", "GPU-1", 1),
                .clock = {1, 1},
                T_RECORDS(strings, names, 1),
                T_RECORDS(collectives, c, (uint32_t)n)};
            t_store_put(st, &rb, 1);
        }
    }
    free(c);
    free(order);
}

/* What a scan passed: checks the order and the fields as they come. */
struct seen {
    uint32_t ranks;
    uint64_t n, first_seq, last_seq;
    uint64_t comm, seq;
    uint32_t op, rank;
    bool any;
    uint64_t min_start, max_start;
    size_t bad;
    uint32_t per_seq[MAX_SEQS]; /* records seen */
};

static int
on_coll(void *arg, uint32_t rank, const struct rs_collective_record *c)
{
    struct seen *s = arg;

    if (s->any) { /* (comm, op, seq, rank) strictly increasing */
        bool later = c->comm_hash != s->comm ? c->comm_hash > s->comm
                     : c->op != s->op        ? c->op > s->op
                     : c->seq != s->seq ? c->seq > s->seq && rank == 0 && s->rank == s->ranks - 1
                                        : rank == s->rank + 1;
        s->bad += !later;
    } else {
        s->bad += rank != 0; /* an instance starts with its first rank */
        s->first_seq = c->seq;
    }
    uint64_t start = start_of(c->seq, rank, c->op);
    s->bad += c->start_ns != start || c->end_ns != start + 5000 || c->bytes != 1024 ||
              c->stream != 7 || !c->seq_exact || (c->comm_hash & ~1ull) != 0xc0de0000u;
    s->any = true;
    s->comm = c->comm_hash;
    s->op = c->op;
    s->seq = c->seq;
    s->rank = rank;
    s->n++;
    if (c->seq < MAX_SEQS)
        s->per_seq[c->seq]++;
    s->last_seq = c->seq > s->last_seq ? c->seq : s->last_seq;
    s->min_start = c->start_ns < s->min_start ? c->start_ns : s->min_start;
    s->max_start = c->start_ns > s->max_start ? c->start_ns : s->max_start;
    return 0;
}

static struct seen
scan(rs_store *st, uint32_t ranks, bool ranged, uint64_t t0, uint64_t t1)
{
    struct seen s = {.ranks = ranks, .min_start = UINT64_MAX};
    rs_store_read *r;

    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(ranged ? rs_store_collectives_scan_range(r, "job-c", t0, t1, on_coll, &s)
                : rs_store_collectives_scan(r, "job-c", on_coll, &s),
         0);
    rs_store_read_end(r);
    return s;
}

static void
instances_in_a_row(void)
{
    char dir[] = "/tmp/rs-colls-test-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    const uint32_t ranks = 37;
    const uint64_t seqs = 100; /* blocks 0 .. 6, the last one partial */

    fill(st, ranks, seqs, 7, 1); /* batches that straddle blocks */
    struct seen all = scan(st, ranks, false, 0, 0);
    T_EQ(all.bad, 0);
    T_EQ(all.n, (uint64_t)COMMS * OPS * ranks * seqs);
    T_EQ(all.last_seq, seqs - 1);

    /* a range: exactly the instances that start in it, give or take the margin */
    for (uint64_t from = 0; from < seqs; from += 13) {
        uint64_t t0 = T0 + from * SPACING + RS_STORE_COLL_MARGIN_NS, t1 = t0 + 25 * SPACING;
        struct seen s = scan(st, ranks, true, t0, t1);
        T_EQ(s.bad, 0);
        T_EQ(s.n % ((uint64_t)ranks * COMMS * OPS), 0); /* whole instances only */
        T_CHECK(s.min_start >= t0 - RS_STORE_COLL_MARGIN_NS);
        T_CHECK(s.max_start < t1 + RS_STORE_COLL_MARGIN_NS);
        /* every instance of [t0, t1) is there, all of it */
        for (uint64_t seq = (t0 - T0 + SPACING - 1) / SPACING;
             seq < seqs && start_of(seq, 0, 0) < t1; seq++)
            T_EQ(s.per_seq[seq], ranks * COMMS * OPS);
    }
    /* a range past the end and one before the start */
    T_EQ(scan(st, ranks, true, T0 + 1000 * SPACING, T0 + 2000 * SPACING).n, 0);
    T_EQ(scan(st, ranks, true, 0, T0 - 3 * RS_STORE_COLL_MARGIN_NS).n, 0);
    t_store_remove(st, dir);
}

/* The store's LMDB environment opened directly, as another version of rankscope would see it. */
static MDB_env *
raw_env(const char *dir, unsigned flags)
{
    MDB_env *env;

    T_EQ(mdb_env_create(&env), 0);
    T_EQ(mdb_env_set_maxdbs(env, 16), 0);
    T_EQ(mdb_env_set_mapsize(env, 1ull << 30), 0);
    T_EQ(mdb_env_open(env, dir, flags, 0644), 0);
    return env;
}

/* Writes the format marker in the write transaction txn. */
static void
put_format(MDB_txn *txn, const char *format)
{
    MDB_dbi meta;
    MDB_val k = {5, "format"}, v = {strlen(format), (void *)format};

    T_EQ(mdb_dbi_open(txn, "meta", 0, &meta), 0);
    T_EQ(mdb_put(txn, meta, &k, &v, 0), 0);
}

/* Turns the store back into format 1 (keys.h rs_key_coll_v1 in "colls"), leaving every
 * `keep_every`-th record in the new layout (0: none) — what a conversion cut short leaves. */
static void
make_format_1(const char *dir, size_t keep_every)
{
    MDB_env *env = raw_env(dir, 0);
    MDB_txn *txn;
    MDB_dbi blocks, old;
    MDB_cursor *c;
    MDB_val k, v;
    size_t i = 0;

    T_EQ(mdb_txn_begin(env, NULL, 0, &txn), 0);
    T_EQ(mdb_dbi_open(txn, "coll_blocks", 0, &blocks), 0);
    T_EQ(mdb_dbi_open(txn, "colls", MDB_CREATE, &old), 0);
    T_EQ(mdb_cursor_open(txn, blocks, &c), 0);
    for (int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT), i++) {
        if (keep_every && i % keep_every == 0)
            continue;
        const struct rs_key_coll *key = k.mv_data;
        struct rs_key_coll_v1 v1;
        memcpy(v1.job_id, key->job_id, 17); /* job_id, comm_hash, op */
        rs__be64_put(v1.seq, rs__coll_key_seq(key));
        memcpy(v1.rank, key->rank, 4);
        MDB_val ok = {sizeof v1, &v1};
        T_EQ(mdb_put(txn, old, &ok, &v, 0), 0);
        T_EQ(mdb_cursor_del(c, 0), 0);
    }
    mdb_cursor_close(c);
    if (!keep_every)
        T_EQ(mdb_drop(txn, blocks, 1), 0);
    put_format(txn, RS_STORE_FORMAT_1);
    T_EQ(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
}

/* Whether the store has a database called `name`. */
static bool
has_db(const char *dir, const char *name)
{
    MDB_env *env = raw_env(dir, MDB_RDONLY);
    MDB_txn *txn;
    MDB_dbi dbi;

    T_EQ(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    int rc = mdb_dbi_open(txn, name, 0, &dbi);
    mdb_txn_abort(txn);
    mdb_env_close(env);
    return rc == 0;
}

struct progress {
    unsigned calls;
    uint64_t done, total;
};

static void
on_progress(void *arg, uint64_t done, uint64_t total)
{
    struct progress *p = arg;
    p->calls++;
    p->done = done;
    p->total = total;
}

static void
converts_format_1(size_t keep_every)
{
    char dir[] = "/tmp/rs-colls-test-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    const uint32_t ranks = 64;
    const uint64_t seqs = 480; /* 122,880 records: more than one conversion transaction */

    fill(st, ranks, seqs, 40, 2);
    struct seen before = scan(st, ranks, false, 0, 0);
    rs_store_close(st);
    make_format_1(dir, keep_every);

    /* tools that must not write refuse it, and leave it as it was */
    struct rs_store_options keep = {.keep_format = true};
    T_EQ(rs_store_open(dir, &keep, &st), RS_E_VERSION);
    T_CHECK(has_db(dir, "colls"));
    T_CHECK(has_db(dir, "coll_blocks") == (keep_every != 0));

    struct progress p = {0};
    struct rs_store_options o = {.migrating = on_progress, .migrating_arg = &p};
    T_EQ(rs_store_open(dir, &o, &st), 0);
    uint64_t moved = before.n - (keep_every ? (before.n + keep_every - 1) / keep_every : 0);
    T_EQ(p.done, moved);
    T_EQ(p.total, moved);
    T_CHECK(p.calls >= 1 + (moved > RS_STORE_MIGRATE_CHUNK)); /* one per transaction */
    struct seen after = scan(st, ranks, false, 0, 0);
    T_EQ(after.bad, 0);
    T_EQ(after.n, before.n);
    struct rs_store_check_report rep;
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.collectives, before.n);
    rs_store_close(st);
    T_CHECK(!has_db(dir, "colls"));

    /* converted once: the next open has nothing to do */
    p = (struct progress){0};
    T_EQ(rs_store_open(dir, &o, &st), 0);
    T_EQ(p.calls, 0);
    t_store_remove(st, dir);
}

/* Makes a new store in dir (a mkdtemp template) and gives it the format marker `format`. */
static void
store_marked(char *dir, const char *format)
{
    rs_store *st = t_store_open(dir, NULL);
    MDB_txn *txn;

    rs_store_close(st);
    MDB_env *env = raw_env(dir, 0);
    T_EQ(mdb_txn_begin(env, NULL, 0, &txn), 0);
    put_format(txn, format);
    T_EQ(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
}

static void
refuses_a_newer_format(void)
{
    char dir[] = "/tmp/rs-colls-test-XXXXXX";
    rs_store *st;

    store_marked(dir, "rankscope-store 9");
    T_EQ(rs_store_open(dir, NULL, &st), RS_E_CORRUPT);
    t_dir_remove(dir);
}

/* The store's format marker, read with LMDB directly. */
static bool
marked(const char *dir, const char *format)
{
    MDB_env *env = raw_env(dir, MDB_RDONLY);
    MDB_txn *txn;
    MDB_dbi meta;
    MDB_val k = {5, "format"}, v = {0, NULL};
    bool same = false;

    T_EQ(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    T_EQ(mdb_dbi_open(txn, "meta", 0, &meta), 0);
    if (mdb_get(txn, meta, &k, &v) == 0)
        same = v.mv_size == strlen(format) && memcmp(v.mv_data, format, v.mv_size) == 0;
    T_EQ(mdb_dbi_open(txn, "kwin_names", 0, &meta), 0); /* created at any open */
    T_EQ(mdb_dbi_open(txn, "awin", 0, &meta), 0);
    T_EQ(mdb_dbi_open(txn, "gpu_ranks", 0, &meta), 0);
    T_EQ(mdb_dbi_open(txn, "verdicts", 0, &meta), 0);
    T_EQ(mdb_dbi_open(txn, "captures", 0, &meta), 0);
    T_EQ(mdb_dbi_open(txn, "job_top", 0, &meta), 0);
    mdb_txn_abort(txn);
    mdb_env_close(env);
    return same;
}

/* A format-2 store (windows name kernels by hash) or format-3 store (agent windows in kwin) reads
 * as it is. --check and --compact-to (keep_format) leave its marker, since an older server may be
 * serving it; a server marks it format 4, so that an older server then refuses it instead of
 * misreading new windows or missing those in awin. */
static void
older_format_moves_to_current(const char *format)
{
    char dir[] = "/tmp/rs-colls-test-XXXXXX";
    struct rs_store_options keep = {.keep_format = true};
    rs_store *st;

    store_marked(dir, format);
    T_EQ(rs_store_open(dir, &keep, &st), 0);
    rs_store_close(st);
    T_CHECK(marked(dir, format));
    T_EQ(rs_store_open(dir, NULL, &st), 0);
    rs_store_close(st);
    T_CHECK(marked(dir, RS_STORE_FORMAT));
    t_dir_remove(dir);
}

int
main(void)
{
    T_RUN(instances_in_a_row);
    T_RUN_ARG(converts_format_1, 0);
    T_RUN_ARG(converts_format_1, 3); /* a conversion cut short: a third moved already */
    T_RUN(refuses_a_newer_format);
    T_RUN_ARG(older_format_moves_to_current, RS_STORE_FORMAT_2);
    T_RUN_ARG(older_format_moves_to_current, RS_STORE_FORMAT_3);
    T_RUN_ARG(older_format_moves_to_current, RS_STORE_FORMAT_4);
    T_RUN_ARG(older_format_moves_to_current, RS_STORE_FORMAT_5);
    T_RUN_ARG(older_format_moves_to_current, RS_STORE_FORMAT_6);
    T_RUN_ARG(older_format_moves_to_current, RS_STORE_FORMAT_7);
    return T_DONE("storage/colls");
}
