/* The names the string table is known to hold, with their ids (see store_int.h): names are never
 * deleted from the string table, so once a commit has written one, every later batch that carries
 * it can skip its lookup and put — an agent's batch repeats the same few hundred kernel names for
 * every rank. */
#include "storage/store_int.h"

#include "common/array.h"
#include "common/hash.h"

#include <errno.h>
#include <stdlib.h>

/* At most this many names are remembered (16 MiB); beyond, names are looked up as before. */
#define KNOWN_MAX_SLOTS (1u << 20)

uint64_t
rs__known_fp(const struct rs__known *k, const char *s, size_t len)
{
    /* FNV-1a from an offset basis only this process knows */
    uint64_t h = 0xcbf29ce484222325ull ^ k->secret;

    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h ? h : 1;
}

static size_t
slot_of(uint64_t fp, size_t cap)
{
    return (size_t)(fp ^ fp >> 29) & (cap - 1);
}

bool
rs__known_get(const struct rs__known *k, uint64_t fp, uint64_t *id)
{
    if (k->cap == 0)
        return false;
    for (size_t i = slot_of(fp, k->cap); k->slots[i].fp; i = (i + 1) & (k->cap - 1))
        if (k->slots[i].fp == fp) {
            *id = k->slots[i].id;
            return true;
        }
    return false;
}

static void
insert(struct rs__known_slot *slots, size_t cap, struct rs__known_slot x)
{
    size_t i = slot_of(x.fp, cap);
    while (slots[i].fp && slots[i].fp != x.fp)
        i = (i + 1) & (cap - 1);
    slots[i] = x;
}

void
rs__known_add(struct rs__known *k, uint64_t fp, uint64_t id)
{
    uint64_t have;

    if (fp == 0 || rs__known_get(k, fp, &have))
        return;
    if ((k->n + 1) * 2 > k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 4096;
        if (cap > KNOWN_MAX_SLOTS)
            return; /* full: a cache, not the truth */
        struct rs__known_slot *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return;
        for (size_t i = 0; i < k->cap; i++)
            if (k->slots[i].fp)
                insert(slots, cap, k->slots[i]);
        free(k->slots);
        k->slots = slots;
        k->cap = cap;
    }
    insert(k->slots, k->cap, (struct rs__known_slot){id, fp});
    k->n++;
}

void
rs__known_fini(struct rs__known *k)
{
    free(k->slots);
    *k = (struct rs__known){0};
}

int
rs__write_note_string(rs_store_write *w, uint64_t fp, uint64_t id)
{
    if (RS_ARRAY_RESERVE(w->fresh, w->cap_fresh, w->n_fresh, 1) != 0)
        return -ENOMEM;
    w->fresh[w->n_fresh++] = (struct rs__known_slot){id, fp};
    return 0;
}
