/* The server's malloc heap (heap.h): glibc's statistics for /metrics, read with mallinfo2, and
 * the arena and threshold settings (mallopt) the server starts with. */
#include "server/heap.h"

#include <errno.h>
#include <malloc.h>
#include <string.h>

void
rs__server_heap_stats(struct rs_heap_stats *out)
{
    memset(out, 0, sizeof *out);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    struct mallinfo2 m = mallinfo2();
    out->in_use = m.uordblks + m.hblkhd;
    out->free_held = m.fordblks;
    out->arenas = m.arena;
    out->mmapped = m.hblkhd;
#endif
}

int
rs__server_heap_tune(unsigned arena_max, size_t mmap_threshold)
{
    int rc = 0;
#ifdef __GLIBC__
    if (arena_max > 0 && arena_max <= INT32_MAX && mallopt(M_ARENA_MAX, (int)arena_max) != 1)
        rc = -EINVAL;
    if (mmap_threshold > 0 && mmap_threshold <= INT32_MAX &&
        (mallopt(M_MMAP_THRESHOLD, (int)mmap_threshold) != 1 ||
         mallopt(M_TRIM_THRESHOLD, (int)RS_HEAP_TRIM_THRESHOLD) != 1))
        rc = -EINVAL;
#endif
    return rc;
}
