/* Interning string table with open addressing (see strtab.h). */
#include "common/strtab.h"

#include "common/hash.h"

#include <stdlib.h>
#include <string.h>

void
rs_strtab_init(struct rs_strtab *t)
{
    memset(t, 0, sizeof *t);
}

void
rs_strtab_fini(struct rs_strtab *t)
{
    rs_strtab_clear(t);
    free(t->strings);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

void
rs_strtab_clear(struct rs_strtab *t)
{
    for (uint32_t i = 0; i < t->count; i++)
        free(t->strings[i]);
    t->count = 0;
    if (t->slots)
        memset(t->slots, 0, t->n_slots * sizeof *t->slots);
}

static uint32_t *
find_slot(const struct rs_strtab *t, const char *s, size_t len)
{
    uint32_t mask = t->n_slots - 1, i = (uint32_t)rs_hash_fnv1a64(s, len) & mask;

    while (t->slots[i] != 0 && strcmp(t->strings[t->slots[i] - 1], s) != 0)
        i = (i + 1) & mask;
    return &t->slots[i];
}

static int
grow(struct rs_strtab *t)
{
    uint32_t n = t->n_slots ? t->n_slots * 2 : 256;
    uint32_t *old = t->slots, old_n = t->n_slots;

    t->slots = calloc(n, sizeof *t->slots);
    if (!t->slots) {
        t->slots = old;
        return -1;
    }
    t->n_slots = n;
    for (uint32_t i = 0; i < old_n; i++) {
        if (old[i] == 0)
            continue;
        const char *s = t->strings[old[i] - 1];
        *find_slot(t, s, strlen(s)) = old[i];
    }
    free(old);
    return 0;
}

uint32_t
rs_strtab_intern(struct rs_strtab *t, const char *s)
{
    size_t len = strlen(s);
    uint32_t *slot;

    if ((t->count + 1) * 2 > t->n_slots && grow(t) != 0)
        return RS_STRTAB_NONE;
    slot = find_slot(t, s, len);
    if (*slot != 0)
        return *slot - 1;
    if (t->count == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 64;
        char **n = realloc(t->strings, cap * sizeof *n);
        if (!n)
            return RS_STRTAB_NONE;
        t->strings = n;
        t->cap = cap;
    }
    if (!(t->strings[t->count] = malloc(len + 1)))
        return RS_STRTAB_NONE;
    memcpy(t->strings[t->count], s, len + 1);
    *slot = ++t->count;
    return t->count - 1;
}
