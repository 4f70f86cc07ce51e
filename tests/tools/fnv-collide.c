/* Test tool: finds two job names with the same 64-bit FNV-1a hash (the hash that once keyed
 * jobs, issue 23 §2), for tests/integration/290-adversarial-job-collision.sh. Pollard's rho with
 * distinguished points: f(x) = fnv1a64("c" + 16 hex digits of x); chains from random starts run
 * until a value with DP_BITS low zero bits, and two chains that end at the same point hold a
 * collision where they merge (about 2^32 evaluations, a few minutes on one core).
 * usage: fnv-collide [SEED] — prints "NAME1 NAME2 HASH" and exits 0. Written for this project,
 * not copied: the method is the textbook one (van Oorschot and Wiener, 1999). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DP_BITS 18
#define TABLE (1u << 16)

static void
name_of(uint64_t x, char out[18])
{
    static const char hex[] = "0123456789abcdef";
    out[0] = 'c';
    for (int i = 16; i >= 1; i--, x >>= 4)
        out[i] = hex[x & 15];
    out[17] = '\0';
}

static uint64_t
f(uint64_t x)
{
    char s[18];
    uint64_t h = 0xcbf29ce484222325ull;

    name_of(x, s);
    for (int i = 0; i < 17; i++)
        h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h;
}

struct dp {
    uint64_t end, start, len;
};

static uint64_t
splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ z >> 30) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ z >> 27) * 0x94d049bb133111ebull;
    return z ^ z >> 31;
}

/* Two chains that end alike: walk them to where they merge. Returns 1 and the two preimages
 * when they differ there (0: one start lies on the other's chain). */
static int
merge(uint64_t a, uint64_t la, uint64_t b, uint64_t lb, uint64_t *xa, uint64_t *xb)
{
    for (; la > lb; la--)
        a = f(a);
    for (; lb > la; lb--)
        b = f(b);
    if (a == b)
        return 0;
    for (uint64_t i = 0; i < la; i++) {
        uint64_t na = f(a), nb = f(b);
        if (na == nb) {
            *xa = a;
            *xb = b;
            return 1;
        }
        a = na;
        b = nb;
    }
    return 0;
}

int
main(int argc, char **argv)
{
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
    struct dp *table = calloc(TABLE, sizeof *table);
    const uint64_t mask = (1ull << DP_BITS) - 1, max_len = 20ull << DP_BITS;

    if (!table)
        return 1;
    for (;;) {
        uint64_t start = splitmix(&seed), x = start, len = 0;
        while ((x & mask) != 0 && len < max_len) {
            x = f(x);
            len++;
        }
        if ((x & mask) != 0)
            continue; /* a chain in a cycle without a distinguished point: drop it */
        for (uint32_t i = (uint32_t)(x >> DP_BITS) % TABLE;; i = (i + 1) % TABLE) {
            if (table[i].len == 0) {
                table[i] = (struct dp){x, start, len};
                break;
            }
            if (table[i].end == x) {
                uint64_t a, b;
                char na[18], nb[18];
                if (merge(table[i].start, table[i].len, start, len, &a, &b)) {
                    name_of(a, na);
                    name_of(b, nb);
                    printf("%s %s %016llx\n", na, nb, (unsigned long long)f(a));
                    return 0;
                }
                break;
            }
        }
    }
}
