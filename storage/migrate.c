/* Format 1 -> 2 (see store_int.h): the collective records move from "colls", one key per
 * (seq, rank), into "coll_blocks" (keys.h rs_key_coll). Chunks of RS_STORE_MIGRATE_CHUNK records
 * are moved (put, then deleted from "colls") one transaction each, so memory stays bounded and a
 * crash midway loses nothing: the store is still format 1 and the next open carries on. The last
 * transaction drops "colls" and writes the new format marker. */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/error.h"

#include <string.h>

/* Moves up to RS_STORE_MIGRATE_CHUNK records; *left is set when some remain. */
static int
move_chunk(rs_store *s, MDB_txn *txn, MDB_dbi old, uint64_t *moved, bool *left)
{
    MDB_cursor *c;
    MDB_val k, v;
    int rc = rs__store_err(mdb_cursor_open(txn, old, &c));

    if (rc != 0)
        return rc;
    size_t n = 0;
    /* (each record is deleted once moved: the next one is the first) */
    for (rc = rs__store_err(mdb_cursor_get(c, &k, &v, MDB_FIRST));
         rc == 0 && n < RS_STORE_MIGRATE_CHUNK;
         rc = rs__store_err(mdb_cursor_get(c, &k, &v, MDB_FIRST)), n++) {
        const struct rs_key_coll_v1 *o = k.mv_data;
        struct rs_key_coll key;
        if (k.mv_size != sizeof *o || v.mv_size != sizeof(struct rs_coll_value)) {
            rc = RS_E_CORRUPT;
            break;
        }
        rs__coll_key(&key, rs__be64_get(o->job_id), rs__be64_get(o->comm_hash), o->op[0],
                     rs__be64_get(o->seq), rs__be32_get(o->rank));
        MDB_val nk = {sizeof key, &key};
        if ((rc = rs__store_err(mdb_put(txn, s->colls, &nk, &v, 0))) != 0 ||
            (rc = rs__store_err(mdb_cursor_del(c, 0))) != 0)
            break;
    }
    mdb_cursor_close(c);
    *moved += n;
    *left = rc == 0;
    return rc == RS_E_NOT_FOUND ? 0 : rc;
}

int
rs__store_migrate_1(rs_store *s, const struct rs_store_options *o)
{
    MDB_txn *txn;
    MDB_dbi old;
    MDB_stat st;
    uint64_t moved = 0, total = 0;
    bool left = true;
    int rc;

    while (left) {
        if ((rc = mdb_txn_begin(s->env, NULL, 0, &txn)) != 0)
            return rs__store_err(rc);
        rc = rs__store_err(mdb_dbi_open(txn, "colls", 0, &old));
        if (rc == RS_E_NOT_FOUND) { /* a format-1 store without collectives */
            left = false;
            rc = 0;
        } else if (rc == 0) {
            if (total == 0 && (rc = rs__store_err(mdb_stat(txn, old, &st))) == 0)
                total = st.ms_entries;
            if (rc == 0)
                rc = move_chunk(s, txn, old, &moved, &left);
            if (rc == 0 && !left)
                rc = rs__store_err(mdb_drop(txn, old, 1));
        }
        MDB_val k = {5, "format"}, v = {sizeof RS_STORE_FORMAT - 1, RS_STORE_FORMAT};
        if (rc == 0 && !left)
            rc = rs__store_err(mdb_put(txn, s->meta, &k, &v, 0));
        if (rc != 0) {
            mdb_txn_abort(txn);
            return rc;
        }
        if ((rc = mdb_txn_commit(txn)) != 0)
            return rs__store_err(rc);
        if (o->migrating)
            o->migrating(o->migrating_arg, moved, total);
    }
    return 0;
}
