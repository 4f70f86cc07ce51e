/* Kernel names by number (kwin_names, see store_int.h): the writer's in-memory map of the
 * committed numbers, the numbers an open transaction assigns, and the readers' lookups. */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/array.h"
#include "common/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static size_t
slot_of(uint64_t h, size_t cap)
{
    return (size_t)(h ^ h >> 29) & (cap - 1);
}

/* The committed number of hash h, or UINT32_MAX. */
static uint32_t
committed_number(const struct rs__numbers *m, uint64_t h)
{
    if (m->cap_slots == 0)
        return UINT32_MAX;
    for (size_t i = slot_of(h, m->cap_slots); m->slots[i] != UINT32_MAX;
         i = (i + 1) & (m->cap_slots - 1))
        if (m->hash_of[m->slots[i]] == h)
            return m->slots[i];
    return UINT32_MAX;
}

/* Puts number k, of hash h, into the first free slot from h's. */
static void
place(uint32_t *slots, size_t cap, uint64_t h, uint32_t k)
{
    size_t i = slot_of(h, cap);
    while (slots[i] != UINT32_MAX)
        i = (i + 1) & (cap - 1);
    slots[i] = k;
}

/* Adds the next number, for hash h, to the committed map. 0 or -ENOMEM. */
static int
append(struct rs__numbers *m, uint64_t h)
{
    if (RS_ARRAY_RESERVE(m->hash_of, m->cap_hash_of, m->n, 1) != 0)
        return -ENOMEM;
    if ((m->n + 1) * 2 > m->cap_slots) {
        size_t cap = m->cap_slots ? m->cap_slots * 2 : 1024;
        uint32_t *slots = malloc(cap * sizeof *slots);
        if (!slots)
            return -ENOMEM;
        memset(slots, 0xff, cap * sizeof *slots);
        for (uint32_t k = 0; k < m->n; k++)
            place(slots, cap, m->hash_of[k], k);
        free(m->slots);
        m->slots = slots;
        m->cap_slots = cap;
    }
    m->hash_of[m->n] = h;
    place(m->slots, m->cap_slots, h, (uint32_t)m->n++);
    return 0;
}

void
rs__numbers_fini(struct rs__numbers *m)
{
    free(m->hash_of);
    free(m->slots);
    *m = (struct rs__numbers){0};
}

/* Reads every committed number into the map (the transaction's view). */
static int
load(rs_store_write *w)
{
    struct rs__numbers *m = &w->store->numbers;
    MDB_cursor *c;
    MDB_val k, v;
    int rc;

    rs__numbers_fini(m);
    if ((rc = mdb_cursor_open(w->txn, w->store->names, &c)) != 0)
        return rs__store_err(rc);
    while ((rc = rs__store_err(mdb_cursor_get(c, &k, &v, m->n == 0 ? MDB_FIRST : MDB_NEXT))) == 0) {
        if (k.mv_size != sizeof(struct rs_key_name_number) || v.mv_size != 8 ||
            rs__be32_get(k.mv_data) != m->n) {
            rc = RS_E_CORRUPT; /* not dense from 0 */
            break;
        }
        if ((rc = append(m, rs__be64_get(v.mv_data))) != 0)
            break;
    }
    mdb_cursor_close(c);
    if (rc == RS_E_NOT_FOUND)
        rc = 0;
    if (rc != 0) {
        rs__numbers_fini(m);
        return rc;
    }
    m->loaded = true;
    return 0;
}

/* Once per transaction: the map must hold what the store holds (another process may have
 * written, or an earlier commit's map update failed). */
static int
sync_numbers(rs_store_write *w)
{
    MDB_stat st;
    int rc;

    if (w->numbers_synced)
        return 0;
    if ((rc = mdb_stat(w->txn, w->store->names, &st)) != 0)
        return rs__store_err(rc);
    if ((!w->store->numbers.loaded || st.ms_entries != w->store->numbers.n) && (rc = load(w)) != 0)
        return rc;
    w->numbers_synced = true;
    return 0;
}

int
rs__numbers_number(rs_store_write *w, uint64_t hash, uint32_t *number)
{
    struct rs__numbers *m = &w->store->numbers;
    int rc;

    if ((rc = sync_numbers(w)) != 0)
        return rc;
    uint32_t k = committed_number(m, hash);
    if (k != UINT32_MAX) {
        *number = k;
        return 0;
    }
    for (size_t i = 0; i < w->n_new_numbers; i++)
        if (w->new_numbers[i] == hash) {
            *number = (uint32_t)(m->n + i);
            return 0;
        }
    if (m->n + w->n_new_numbers >= UINT32_MAX)
        return RS_E_TOO_BIG;
    if (RS_ARRAY_RESERVE(w->new_numbers, w->cap_new_numbers, w->n_new_numbers, 1) != 0)
        return -ENOMEM;
    struct rs_key_name_number key;
    uint8_t val[8];
    k = (uint32_t)(m->n + w->n_new_numbers);
    rs__be32_put(key.number, k);
    rs__be64_put(val, hash);
    MDB_val mk = {sizeof key, &key}, mv = {sizeof val, val};
    if ((rc = mdb_put(w->txn, w->store->names, &mk, &mv, MDB_NOOVERWRITE)) != 0)
        return rc == MDB_KEYEXIST ? RS_E_CORRUPT : rs__store_err(rc); /* (not dense) */
    w->new_numbers[w->n_new_numbers++] = hash;
    *number = k;
    return 0;
}

int
rs__numbers_hash_in_write(void *arg, uint32_t number, uint64_t *hash)
{
    rs_store_write *w = arg;
    const struct rs__numbers *m = &w->store->numbers;
    int rc;

    if ((rc = sync_numbers(w)) != 0)
        return rc;
    if (number < m->n) {
        *hash = m->hash_of[number];
        return 0;
    }
    if (number - m->n < w->n_new_numbers) {
        *hash = w->new_numbers[number - m->n];
        return 0;
    }
    return RS_E_CORRUPT;
}

void
rs__numbers_committed(rs_store_write *w)
{
    struct rs__numbers *m = &w->store->numbers;

    for (size_t i = 0; i < w->n_new_numbers; i++)
        if (append(m, w->new_numbers[i]) != 0) {
            m->loaded = false; /* read again by the next transaction that needs it */
            break;
        }
}

int
rs__numbers_hash_in_read(void *arg, uint32_t number, uint64_t *hash)
{
    struct rs__number_cache *c = arg;
    size_t slot = number % RS__NUMBER_CACHE;
    struct rs_key_name_number key;
    MDB_val k = {sizeof key, &key}, v;
    int rc;

    if (c->known[slot] && c->number[slot] == number) {
        *hash = c->hash[slot];
        return 0;
    }
    rs__be32_put(key.number, number);
    if ((rc = mdb_get(c->txn, c->store->names, &k, &v)) != 0)
        return rc == MDB_NOTFOUND ? RS_E_CORRUPT : rs__store_err(rc);
    if (v.mv_size != 8)
        return RS_E_CORRUPT;
    c->known[slot] = true;
    c->number[slot] = number;
    c->hash[slot] = *hash = rs__be64_get(v.mv_data);
    return 0;
}
