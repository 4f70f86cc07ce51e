/* Open-addressing indexes of positions: the one place that knows how a caller's hash index over
 * its own array of items is laid out and grows. The index is a power-of-two table of uint32
 * slots, each 0 (empty) or the position + 1 of an item, placed by the item's hash with linear
 * probing, kept at most half full. The caller keeps the items, their hash and the lookup, a probe
 * that compares its own keys:
 *
 *     for (size_t s = hash & (n_slots - 1); index[s]; s = (s + 1) & (n_slots - 1))
 *         if (same key as items[index[s] - 1]) ...   (n_slots 0: nothing indexed yet)
 */
#ifndef RS_COMMON_POS_INDEX_H
#define RS_COMMON_POS_INDEX_H

#include <stddef.h>
#include <stdint.h>

/* The hash of the item at `item` (the caller's, as used by its lookups). */
typedef uint64_t (*rs_pos_index_hash_fn)(const void *item);

/* Puts position + 1 `pos1` into the first free slot for `hash`. The table must have one. */
void rs_pos_index_put(uint32_t *index, size_t n_slots, uint64_t hash, uint32_t pos1);

/* Empties the table and puts the first n items of `items` (stride bytes apart) back: after
 * items were removed or moved. */
void rs_pos_index_refill(uint32_t *index, size_t n_slots, size_t n, const void *items,
                         size_t stride, rs_pos_index_hash_fn hash_of);

/* Makes room for item n + 1: when the table would then be more than half full, a table twice as
 * big (256 slots first) replaces it, refilled with the n items. Returns 0 or -ENOMEM (the old
 * table kept). */
int rs_pos_index_grow(uint32_t **index, size_t *n_slots, size_t n, const void *items, size_t stride,
                      rs_pos_index_hash_fn hash_of);

#endif
