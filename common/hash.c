/* FNV-1a and kernel-sourced random ids (see hash.h). */
#include "common/hash.h"

#include "common/clock.h"

#include <sys/random.h>
#include <unistd.h>

uint64_t
rs_hash_fnv1a64(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ull;

    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

uint64_t
rs_random_u64(void)
{
    uint64_t v = 0;

    if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v)
        v = rs_clock_realtime_ns() ^ ((uint64_t)getpid() << 32); /* no entropy: still unique */
    return v ? v : 1;
}
