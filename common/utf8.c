/* UTF-8 validation (see utf8.h), following the well-formed byte sequences table of Unicode 15,
 * section 3.9. */
#include "common/utf8.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The length of the well-formed sequence at s (1 - 4 bytes; a NUL is 1), or 0 when none is. */
static size_t
sequence_length(const unsigned char *s, const unsigned char *end)
{
    unsigned c = *s, lo = 0x80, hi = 0xBF;
    size_t n;

    if (c < 0x80)
        return 1;
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
        return 0;
    if ((size_t)(end - s) <= n || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i <= n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n + 1;
}

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
        size_t n = *s ? sequence_length(s, end) : 0;
        if (n == 0)
            return false;
        s += n;
    }
    return true;
}

/* Appends n bytes to out while they fit whole; once one does not, nothing more is written. */
static void
put(char *out, size_t out_len, size_t *written, bool *full, const void *bytes, size_t n)
{
    if (*full || *written + n >= out_len) {
        *full = true;
        return;
    }
    memcpy(out + *written, bytes, n);
    *written += n;
}

size_t
rs_utf8_escape(const char *str, size_t len, char *out, size_t out_len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str, *end = s + len;
    size_t need = 0, written = 0;
    bool full = false;

    while (s < end) {
        size_t n = sequence_length(s, end);
        /* C0 controls and DEL; C1 controls (U+0080 - U+009F: 0xC2 0x80 - 0x9F); not UTF-8 */
        bool hide = n == 0 || (n == 1 && (*s < 0x20 || *s == 0x7F)) ||
                    (n == 2 && s[0] == 0xC2 && s[1] < 0xA0);
        if (!hide) {
            put(out, out_len, &written, &full, s, n);
            need += n;
            s += n;
            continue;
        }
        for (size_t i = 0; i < (n ? n : 1); i++, need += 4) {
            char e[4] = {'\\', 'x', hex[s[i] >> 4], hex[s[i] & 15]};
            put(out, out_len, &written, &full, e, sizeof e);
        }
        s += n ? n : 1;
    }
    if (out_len)
        out[written] = '\0';
    return need;
}
