/* Deterministic noise for hand-built jobs in tests: t_noise(x) is a fixed value in [-1, 1) for each
 * x (a splitmix64 finaliser), so a test's "noisy" job is the same on every run. */
#ifndef RS_TESTS_T_NOISE_H
#define RS_TESTS_T_NOISE_H

#include <stdint.h>

static inline double
t_noise(uint64_t x)
{
    x = (x + 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
    x ^= x >> 31;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 29;
    return (double)(x % 2000000) / 1e6 - 1.0;
}

#endif
