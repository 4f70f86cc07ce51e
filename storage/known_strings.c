/* The string hashes the store is known to hold (see store_int.h): names are never deleted from the
 * string table, so once a commit has written one, every later batch that carries it can skip its
 * put — an agent's batch repeats the same few hundred kernel names for every rank. */
#include "storage/store_int.h"

#include "common/array.h"

#include <errno.h>
#include <stdlib.h>

/* At most this many hashes are remembered (8 MiB); beyond, names are put as before. */
#define KNOWN_MAX_SLOTS (1u << 20)

static size_t
slot_of(uint64_t h, size_t cap)
{
    return (size_t)(h ^ h >> 29) & (cap - 1);
}

bool
rs__known_has(const struct rs__known *k, uint64_t h)
{
    if (k->cap == 0 || h == 0)
        return false;
    for (size_t i = slot_of(h, k->cap); k->slots[i]; i = (i + 1) & (k->cap - 1))
        if (k->slots[i] == h)
            return true;
    return false;
}

static void
insert(uint64_t *slots, size_t cap, uint64_t h)
{
    size_t i = slot_of(h, cap);
    while (slots[i] && slots[i] != h)
        i = (i + 1) & (cap - 1);
    slots[i] = h;
}

void
rs__known_add(struct rs__known *k, uint64_t h)
{
    if (h == 0 || rs__known_has(k, h))
        return;
    if ((k->n + 1) * 2 > k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 4096;
        if (cap > KNOWN_MAX_SLOTS)
            return; /* full: a cache, not the truth */
        uint64_t *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return;
        for (size_t i = 0; i < k->cap; i++)
            if (k->slots[i])
                insert(slots, cap, k->slots[i]);
        free(k->slots);
        k->slots = slots;
        k->cap = cap;
    }
    insert(k->slots, k->cap, h);
    k->n++;
}

void
rs__known_fini(struct rs__known *k)
{
    free(k->slots);
    *k = (struct rs__known){0};
}

int
rs__write_note_string(rs_store_write *w, uint64_t h)
{
    if (RS_ARRAY_RESERVE(w->fresh, w->cap_fresh, w->n_fresh, 1) != 0)
        return -ENOMEM;
    w->fresh[w->n_fresh++] = h;
    return 0;
}
