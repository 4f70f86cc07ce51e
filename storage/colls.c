/* Collective records: the whole job, or a time range without walking the job's history (see
 * store.h). coll_blocks is ordered (job, comm, op, block, rank, seq in block) (keys.h): each block
 * is read whole and passed on regrouped by (seq, rank), so that callers see every rank of one
 * instance in a row. Within one (comm, op) the instances start in sequence order, so a binary
 * search on the block number finds the first block of a time range; the scan then stops at the
 * first record past it and jumps to the next (comm, op). */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One block's records, bucketed by seq in block (counting sort: rank order kept in each). */
struct block_record {
    uint32_t rank;
    uint8_t seq_in_block;
    struct rs_coll_value v;
};

struct block {
    uint8_t prefix[RS_COLL_BLOCK_PREFIX]; /* (job, comm, op, block) */
    struct block_record *v, *sorted;
    size_t n, cap;
};

static void
block_fini(struct block *b)
{
    free(b->v);
    free(b->sorted);
}

static bool
valid_entry(const MDB_val *k, const MDB_val *v)
{
    return k->mv_size == sizeof(struct rs_key_coll) && v->mv_size == sizeof(struct rs_coll_value) &&
           ((const struct rs_key_coll *)k->mv_data)->seq_in_block[0] < RS_COLL_BLOCK_SEQS;
}

/* Reads the block whose first entry the cursor holds in (k, v), leaving (k, v) at the entry after
 * it. Returns 0 (*rc_next: that entry's code: 0, RS_E_NOT_FOUND past the last, or a storage error),
 * RS_E_CORRUPT or -ENOMEM. */
static int
block_read(MDB_cursor *c, MDB_val *k, MDB_val *v, struct block *b, int *rc_next)
{
    int rc = 0;

    memcpy(b->prefix, k->mv_data, sizeof b->prefix);
    b->n = 0;
    for (; rc == 0 && k->mv_size >= sizeof b->prefix &&
           memcmp(k->mv_data, b->prefix, sizeof b->prefix) == 0;
         rc = mdb_cursor_get(c, k, v, MDB_NEXT)) {
        if (!valid_entry(k, v))
            return RS_E_CORRUPT;
        if (b->n == b->cap) {
            size_t cap = b->cap ? 2 * b->cap : 256;
            struct block_record *nv = realloc(b->v, cap * sizeof *nv);
            if (!nv)
                return -ENOMEM;
            b->v = nv;
            struct block_record *ns = realloc(b->sorted, cap * sizeof *ns);
            if (!ns)
                return -ENOMEM;
            b->sorted = ns;
            b->cap = cap;
        }
        const struct rs_key_coll *key = k->mv_data;
        struct block_record *r = &b->v[b->n++];
        r->rank = rs__be32_get(key->rank);
        r->seq_in_block = key->seq_in_block[0];
        memcpy(&r->v, v->mv_data, sizeof r->v);
    }
    size_t start[RS_COLL_BLOCK_SEQS + 1] = {0};
    for (size_t i = 0; i < b->n; i++)
        start[b->v[i].seq_in_block + 1]++;
    for (unsigned s = 1; s <= RS_COLL_BLOCK_SEQS; s++)
        start[s] += start[s - 1];
    for (size_t i = 0; i < b->n; i++)
        b->sorted[start[b->v[i].seq_in_block]++] = b->v[i];
    *rc_next = rs__store_err(rc);
    return 0;
}

/* Where a range scan is in one (comm, op): skipping the instances that start before `from` (by
 * their first record, in rank order) until one does not, then passing records until one starts at
 * or after `until`. A whole-job scan passes everything. */
struct walk {
    uint64_t from, until;
    bool ranged;
    bool passing;
    bool past; /* a record at or after `until` was seen: the (comm, op) is done */
    rs_store_collective_cb cb;
    void *arg;
};

/* Passes the block's records on in (seq, rank) order. Returns the callback's non-zero value. */
static int
block_emit(const struct block *b, struct walk *w)
{
    const struct rs_key_coll *key = (const void *)b->prefix; /* the prefix's fields only */
    uint64_t comm = rs__be64_get(key->comm_hash), block = rs__be64_get(key->block);

    for (size_t i = 0; i < b->n; i++) {
        const struct block_record *r = &b->sorted[i];
        bool first_of_seq = i == 0 || b->sorted[i - 1].seq_in_block != r->seq_in_block;
        if (!w->passing && first_of_seq && r->v.start_ns >= w->from)
            w->passing = true;
        if (!w->passing)
            continue;
        if (w->ranged && r->v.start_ns >= w->until) {
            w->past = true;
            return 0;
        }
        struct rs_collective_record rec = {.start_ns = r->v.start_ns,
                                           .end_ns = r->v.end_ns,
                                           .bytes = r->v.bytes,
                                           .comm_hash = comm,
                                           .seq = block * RS_COLL_BLOCK_SEQS + r->seq_in_block,
                                           .op = key->op[0],
                                           .stream = r->v.stream,
                                           .seq_exact = r->v.seq_exact != 0};
        int rc = w->cb(w->arg, r->rank, &rec);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Positions c at the first key >= (job, comm, op, block) and reads it: 0, RS_E_NOT_FOUND (no such
 * key), RS_E_CORRUPT or a storage error. */
static int
seek(MDB_cursor *c, const uint8_t *job_id, const uint8_t *comm_op, uint64_t block, MDB_val *k,
     MDB_val *v)
{
    struct rs_key_coll key;

    memset(&key, 0, sizeof key);
    memcpy(key.job_id, job_id, RS_KEY_JOB_PREFIX);
    memcpy(key.comm_hash, comm_op, RS_COLL_COMM_OP); /* comm_hash and op are adjacent */
    rs__be64_put(key.block, block);
    *k = (MDB_val){sizeof key, &key};
    int rc = mdb_cursor_get(c, k, v, MDB_SET_RANGE);
    if (rc == 0 && !valid_entry(k, v))
        return RS_E_CORRUPT;
    return rs__store_err(rc);
}

/* Whether k is in (job, comm, op). */
static bool
in_group(const MDB_val *k, const uint8_t *job_id, const uint8_t *comm_op)
{
    const struct rs_key_coll *key = k->mv_data;
    return memcmp(key->job_id, job_id, RS_KEY_JOB_PREFIX) == 0 &&
           memcmp(key->comm_hash, comm_op, RS_COLL_COMM_OP) == 0;
}

/* The first block of the group whose first record starts at or after t (or past the group). */
static int
first_block_at(MDB_cursor *c, const uint8_t *job_id, const uint8_t *comm_op, uint64_t lo,
               uint64_t hi, uint64_t t, uint64_t *out)
{
    MDB_val k, v;
    int rc;

    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if ((rc = seek(c, job_id, comm_op, mid, &k, &v)) != 0 && rc != RS_E_NOT_FOUND)
            return rc;
        if (rc == RS_E_NOT_FOUND || !in_group(&k, job_id, comm_op)) {
            hi = mid;
            continue;
        }
        struct rs_coll_value cv;
        memcpy(&cv, v.mv_data, sizeof cv);
        if (cv.start_ns < t)
            lo = rs__be64_get(((const struct rs_key_coll *)k.mv_data)->block) + 1;
        else
            hi = mid;
    }
    *out = lo;
    return 0;
}

/* The scan: every (comm, op) of the job, each from its first block that may hold an instance
 * starting at or after w->from (all of them when ranged is false). */
static int
scan(rs_store_read *r, const char *job, struct walk proto)
{
    uint8_t job_id[RS_KEY_JOB_PREFIX], comm_op[RS_COLL_COMM_OP];
    struct block b = {0};
    MDB_cursor *c;
    MDB_val k, v;
    uint64_t id;
    int rc, cb_rc = 0;

    if ((rc = rs__store_job_key(r->txn, r->store, job, &id)) != 0)
        return rc == RS_E_NOT_FOUND ? 0 : rc; /* an unknown job has no collectives */
    rs__be64_put(job_id, id);
    memset(comm_op, 0, sizeof comm_op);
    if ((rc = mdb_cursor_open(r->txn, r->store->colls, &c)) != 0)
        return rs__store_err(rc);
    for (;;) {
        /* the next (comm, op) group of the job */
        if ((rc = seek(c, job_id, comm_op, 0, &k, &v)) != 0)
            break;
        const struct rs_key_coll *key = k.mv_data;
        if (memcmp(key->job_id, job_id, sizeof job_id) != 0)
            break;
        memcpy(comm_op, key->comm_hash, sizeof comm_op);
        uint64_t start = rs__be64_get(key->block);
        if (proto.ranged) {
            if ((rc = first_block_at(c, job_id, comm_op, start, UINT64_MAX, proto.from, &start)) !=
                0)
                break;
            /* the block before may hold instances of the range after its first ones */
            start = start > 0 ? start - 1 : 0;
        }
        struct walk w = proto;
        for (rc = seek(c, job_id, comm_op, start, &k, &v);
             rc == 0 && !w.past && in_group(&k, job_id, comm_op);) {
            int rc_next;
            if ((cb_rc = rs__store_read_expired(r)) != 0 ||
                (rc = block_read(c, &k, &v, &b, &rc_next)) != 0 ||
                (cb_rc = block_emit(&b, &w)) != 0)
                goto out;
            rc = rc_next;
        }
        if (rc != 0 && rc != RS_E_NOT_FOUND)
            break;
        /* next group: (comm, op) + 1 as a big-endian number */
        int i = (int)sizeof comm_op - 1;
        while (i >= 0 && ++comm_op[i] == 0)
            i--;
        if (i < 0) {
            rc = RS_E_NOT_FOUND;
            break;
        }
    }
out:
    mdb_cursor_close(c);
    block_fini(&b);
    if (cb_rc != 0)
        return cb_rc;
    return rc == RS_E_NOT_FOUND ? 0 : rc;
}

int
rs_store_collectives_scan(rs_store_read *r, const char *job, rs_store_collective_cb cb, void *arg)
{
    return scan(r, job, (struct walk){.passing = true, .cb = cb, .arg = arg});
}

int
rs_store_collectives_scan_range(rs_store_read *r, const char *job, uint64_t t0, uint64_t t1,
                                rs_store_collective_cb cb, void *arg)
{
    uint64_t from = t0 > RS_STORE_COLL_MARGIN_NS ? t0 - RS_STORE_COLL_MARGIN_NS : 0;
    uint64_t until = t1 + RS_STORE_COLL_MARGIN_NS < t1 ? UINT64_MAX : t1 + RS_STORE_COLL_MARGIN_NS;
    return scan(r, job,
                (struct walk){.from = from, .until = until, .ranged = true, .cb = cb, .arg = arg});
}
