/* UTF-8 validation (see utf8.h), following the well-formed byte sequences table of Unicode 15,
 * section 3.9. */
#include "common/utf8.h"

#include <stdint.h>
#include <string.h>

bool
rs_utf8_valid(const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str, *end = s + len;

    while (s < end) {
        /* ASCII without NUL, 8 bytes at a time (names are mostly ASCII) */
        if ((size_t)(end - s) >= 8) {
            uint64_t w;
            memcpy(&w, s, sizeof w);
            const uint64_t high = 0x8080808080808080ull, ones = 0x0101010101010101ull;
            if ((w & high) == 0 && ((w - ones) & ~w & high) == 0) {
                s += 8;
                continue;
            }
        }
        unsigned c = *s;
        size_t n;
        unsigned lo = 0x80, hi = 0xBF;

        if (c == 0)
            return false;
        if (c < 0x80) {
            s++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF)
            n = 1;
        else if (c >= 0xE0 && c <= 0xEF) {
            n = 2;
            if (c == 0xE0)
                lo = 0xA0;
            else if (c == 0xED)
                hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 3;
            if (c == 0xF0)
                lo = 0x90;
            else if (c == 0xF4)
                hi = 0x8F;
        } else
            return false;
        if ((size_t)(end - s) <= n)
            return false;
        if (s[1] < lo || s[1] > hi)
            return false;
        for (size_t i = 2; i <= n; i++)
            if (s[i] < 0x80 || s[i] > 0xBF)
                return false;
        s += n + 1;
    }
    return true;
}
