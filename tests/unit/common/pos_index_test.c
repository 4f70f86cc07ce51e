/* Unit tests of the open-addressing index of positions (common/pos_index.h): it grows to stay at
 * most half full, every item stays findable by the caller's probe through growth and refills,
 * and colliding hashes probe on. */
#include "common/pos_index.h"
#include "tests/t.h"

#include <stdlib.h>

struct item {
    uint64_t key;
};

static uint64_t
item_hash(const void *p)
{
    return ((const struct item *)p)->key * 0x9e3779b97f4a7c15ull;
}

static uint64_t
colliding_hash(const void *p)
{
    (void)p;
    return 7; /* every item starts its probe at the same slot */
}

/* The position of `key` found by the caller's probe, or -1. */
static long
find(const uint32_t *index, size_t n_slots, const struct item *items, uint64_t key, uint64_t hash)
{
    if (!n_slots)
        return -1;
    for (size_t s = hash & (n_slots - 1); index[s]; s = (s + 1) & (n_slots - 1))
        if (items[index[s] - 1].key == key)
            return (long)index[s] - 1;
    return -1;
}

static void
grows_and_finds(rs_pos_index_hash_fn hash_of)
{
    enum { N = 3000 };
    struct item *items = calloc(N, sizeof *items);
    uint32_t *index = NULL;
    size_t n_slots = 0, n = 0;

    T_CHECK(items != NULL);
    for (; items && n < N; n++) {
        items[n].key = n * 11 + 5;
        T_OK(rs_pos_index_grow(&index, &n_slots, n, items, sizeof *items, hash_of));
        T_CHECK(2 * (n + 1) <= n_slots); /* at most half full with the new item */
        rs_pos_index_put(index, n_slots, hash_of(&items[n]), (uint32_t)(n + 1));
    }
    T_EQ(n_slots, 8192);
    for (size_t i = 0; items && i < N; i++)
        T_EQ(find(index, n_slots, items, items[i].key, hash_of(&items[i])), (long)i);
    T_EQ(find(index, n_slots, items, 4, hash_of(&(struct item){4})), -1);

    /* drop every other item, as a caller that emitted some would, and refill */
    size_t kept = 0;
    for (size_t i = 0; items && i < N; i += 2)
        items[kept++] = items[i];
    rs_pos_index_refill(index, n_slots, kept, items, sizeof *items, hash_of);
    for (size_t i = 0; items && i < kept; i++)
        T_EQ(find(index, n_slots, items, items[i].key, hash_of(&items[i])), (long)i);
    T_EQ(find(index, n_slots, items, 1 * 11 + 5, hash_of(&(struct item){16})), -1);
    free(index);
    free(items);
}

static void
spread_hashes(void)
{
    grows_and_finds(item_hash);
}

static void
one_hash_for_all(void)
{
    grows_and_finds(colliding_hash);
}

int
main(void)
{
    T_RUN(spread_hashes);
    T_RUN(one_hash_for_all);
    return T_DONE("common/pos_index");
}
