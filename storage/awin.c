/* The agent-window database (awin, keys.h rs_key_awin): keys and the walk over one rank's windows,
 * which lie in one run per time block, between the other ranks' runs of that block. */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/error.h"

#include <string.h>

static void
key_at(struct rs_key_awin *k, const uint8_t *rank_key, uint32_t block, int kind, uint64_t start,
       uint16_t part)
{
    memcpy(k->job_id, rank_key, RS_KEY_JOB_PREFIX);
    rs__be32_put(k->block, block);
    memcpy(k->rank, rank_key + RS_KEY_JOB_PREFIX, sizeof k->rank);
    k->kind[0] = 0;
    k->kind[1] = (uint8_t)kind;
    rs__be64_put(k->start_ns, start);
    rs__be16_put(k->part, part);
}

uint32_t
rs__awin_block(uint64_t start)
{
    uint64_t b = start / RS_AWIN_BLOCK_NS;
    return b > UINT32_MAX ? UINT32_MAX : (uint32_t)b; /* (the year 2514: one last block) */
}

void
rs__awin_key(struct rs_key_awin *k, const uint8_t *rank_key, int kind, uint64_t start,
             uint16_t part)
{
    key_at(k, rank_key, rs__awin_block(start), kind, start, part);
}

/* Whether key k is one of the walk's windows in block w->block. */
static bool
walk_has(const struct rs__awin_walk *w, const struct rs_key_awin *k)
{
    return memcmp(k->job_id, w->rank_key, RS_KEY_JOB_PREFIX) == 0 &&
           rs__be32_get(k->block) == w->block &&
           memcmp(k->rank, w->rank_key + RS_KEY_JOB_PREFIX, sizeof k->rank) == 0 &&
           k->kind[0] == 0 && k->kind[1] == (uint8_t)w->kind;
}

int
rs__awin_next(struct rs__awin_walk *w, MDB_val *k, MDB_val *v)
{
    int rc;

    if (w->from >= w->until)
        return RS_E_NOT_FOUND;
    uint32_t last = rs__awin_block(w->until - 1);
    if (!w->on && w->block < rs__awin_block(w->from))
        w->block = rs__awin_block(w->from);
    if (w->on) { /* the next window of this block, if the rank has one */
        if ((rc = mdb_cursor_get(w->c, k, v, MDB_NEXT)) != 0)
            return rs__store_err(rc);
        w->on = false;
        if (k->mv_size != sizeof(struct rs_key_awin))
            return RS_E_CORRUPT;
        if (walk_has(w, k->mv_data))
            goto found;
        if (w->block == UINT32_MAX)
            return RS_E_NOT_FOUND;
        w->block++; /* (a seek below finds the block after the gap, if any) */
    }
    for (;;) {
        if (w->block > last)
            return RS_E_NOT_FOUND;
        struct rs_key_awin at;
        key_at(&at, w->rank_key, w->block, w->kind, w->from, 0);
        *k = (MDB_val){sizeof at, &at};
        if ((rc = mdb_cursor_get(w->c, k, v, MDB_SET_RANGE)) != 0)
            return rs__store_err(rc);
        if (k->mv_size != sizeof at)
            return RS_E_CORRUPT;
        const struct rs_key_awin *got = k->mv_data;
        if (memcmp(got->job_id, w->rank_key, RS_KEY_JOB_PREFIX) != 0)
            return RS_E_NOT_FOUND; /* past the job's last block */
        if (walk_has(w, got))
            goto found;
        uint32_t b = rs__be32_get(got->block);
        if (b > w->block) { /* nothing of the job in between */
            w->block = b;
            continue;
        }
        if (w->block == UINT32_MAX)
            return RS_E_NOT_FOUND;
        w->block++; /* the rank has nothing (more) in this block */
    }
found:
    if (rs__be64_get(((const struct rs_key_awin *)k->mv_data)->start_ns) >= w->until)
        return RS_E_NOT_FOUND; /* (later blocks start later still) */
    w->on = true;
    return 0;
}
