/* Open-addressing indexes of positions (see pos_index.h). */
#include "common/pos_index.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void
rs_pos_index_put(uint32_t *index, size_t n_slots, uint64_t hash, uint32_t pos1)
{
    size_t s = hash & (n_slots - 1);

    while (index[s])
        s = (s + 1) & (n_slots - 1);
    index[s] = pos1;
}

void
rs_pos_index_refill(uint32_t *index, size_t n_slots, size_t n, const void *items, size_t stride,
                    rs_pos_index_hash_fn hash_of)
{
    memset(index, 0, n_slots * sizeof *index);
    for (size_t i = 0; i < n; i++)
        rs_pos_index_put(index, n_slots, hash_of((const char *)items + i * stride),
                         (uint32_t)(i + 1));
}

int
rs_pos_index_grow(uint32_t **index, size_t *n_slots, size_t n, const void *items, size_t stride,
                  rs_pos_index_hash_fn hash_of)
{
    if (2 * (n + 1) <= *n_slots)
        return 0;
    size_t cap = *n_slots ? 2 * *n_slots : 256;
    uint32_t *v = malloc(cap * sizeof *v);
    if (!v)
        return -ENOMEM;
    rs_pos_index_refill(v, cap, n, items, stride, hash_of);
    free(*index);
    *index = v;
    *n_slots = cap;
    return 0;
}
