/* An interning string table: each distinct string gets a small dense id (0, 1, 2, ...). Used by the
 * collector client (kernel names repeat millions of times) and by the agent's per-rank
 * aggregation. Not thread-safe: one owner. */
#ifndef RS_COMMON_STRTAB_H
#define RS_COMMON_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#define RS_STRTAB_NONE UINT32_MAX

struct rs_strtab {
    char **strings; /* id -> owned copy */
    uint32_t count, cap;
    uint32_t *slots;  /* open addressing: id + 1, 0 = empty */
    uint32_t n_slots; /* power of two */
};

void rs_strtab_init(struct rs_strtab *t);
void rs_strtab_fini(struct rs_strtab *t);

/* Returns the id of `s` (adding a copy when new), or RS_STRTAB_NONE when out of memory. */
uint32_t rs_strtab_intern(struct rs_strtab *t, const char *s);

/* Forgets every string (ids restart at 0), keeping the allocations for reuse. */
void rs_strtab_clear(struct rs_strtab *t);

#endif
