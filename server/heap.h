/* The server's malloc heap (glibc): what it holds in use and what it keeps freed but resident, for
 * /metrics and the soak (tests/bench/soak.sh), and how the server asks glibc to hand freed memory
 * back (docs/configuration.md, --malloc-arena-max). Elsewhere than glibc: zeros, and tuning does nothing. */
#ifndef RS_SERVER_HEAP_H
#define RS_SERVER_HEAP_H

#include <stddef.h>
#include <stdint.h>

struct rs_heap_stats {
    uint64_t in_use;    /* bytes handed out by malloc and not yet freed (arenas + mmapped) */
    uint64_t free_held; /* bytes freed but kept in the arenas (resident or not) */
    uint64_t arenas;    /* bytes the arenas took from the system (not counting mmapped chunks) */
    uint64_t mmapped;   /* bytes in chunks mmapped on their own (returned on free) */
};

/* Reads glibc's statistics (mallinfo2). It walks every arena under its lock: milliseconds on a
 * fragmented heap, so call it per /metrics request, not per batch. Any thread. */
void rs__server_heap_stats(struct rs_heap_stats *out);

/* The trim threshold rs__server_heap_tune sets with an mmap threshold: an arena whose free top
 * grows past it gives the rest back to the system at once. */
#define RS_HEAP_TRIM_THRESHOLD (8u << 20)

/* Asks glibc, before the server starts its threads, to keep less of what they free:
 * - arena_max > 0: at most that many arenas (glibc's default is 8 per core, and the server's
 *   ~20 threads — loop, writer, decoders, query pools, NNG, libuv's pool — each come to keep
 *   their own arena's freed memory resident);
 * - mmap_threshold > 0: allocations of that size or more (answers, decoded batches, a scan's
 *   arrays) are mmapped on their own and unmapped when freed, and free tops of arenas beyond
 *   RS_HEAP_TRIM_THRESHOLD are returned. Setting it turns off glibc's dynamic thresholds, which
 *   after each large block freed raise the mmap threshold (to 32 MiB) and the trim threshold (to
 *   64 MiB per arena): then large blocks come from the arenas and what they leave stays resident
 *   (malloc_trim madvises free chunks, not a thread arena's top).
 * 0 leaves glibc's choice. Returns 0, or -EINVAL when glibc refused one (then the rest are still
 * tried). Call once, from the main thread, before other threads allocate; elsewhere than glibc
 * it does nothing. (docs/BENCHMARKS.md "Resources under load and attack", 2026-11-25.) */
int rs__server_heap_tune(unsigned arena_max, size_t mmap_threshold);

#endif
