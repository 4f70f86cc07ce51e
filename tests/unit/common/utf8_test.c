/* Unit tests of common/utf8: well-formed sequences pass, everything else (NUL, overlong forms,
 * surrogates, truncated or stray bytes) fails, wherever it sits relative to the 8-byte ASCII fast
 * path. */
#include "common/utf8.h"
#include "tests/t.h"

#include <string.h>

/* `bad` (or good) text placed at every offset 0..17 of an ASCII run must give the same answer. */
static void
check_at_offsets(const char *piece, size_t piece_len, bool want)
{
    char buf[64];

    for (size_t off = 0; off < 18; off++) {
        memset(buf, 'a', sizeof buf);
        memcpy(buf + off, piece, piece_len);
        size_t len = off + piece_len + (off % 5); /* sometimes ASCII after it */
        if (rs_utf8_valid(buf, len) != want) {
            fprintf(stderr, "  offset %zu, piece of %zu bytes: want %d\n", off, piece_len, want);
            T_CHECK(0);
        }
    }
}

static void
valid_text(void)
{
    T_CHECK(rs_utf8_valid("", 0));
    const char *name = "void at::native::elementwise_kernel<128, 4>";
    T_CHECK(rs_utf8_valid(name, strlen(name)));
    check_at_offsets("\xc3\xa9", 2, true);         /* é */
    check_at_offsets("\xe2\x82\xac", 3, true);     /* € */
    check_at_offsets("\xf0\x9f\x98\x80", 4, true); /* U+1F600 */
    check_at_offsets("\xed\x9f\xbf", 3, true);     /* U+D7FF, just below the surrogates */
    check_at_offsets("\xf4\x8f\xbf\xbf", 4, true); /* U+10FFFF */
}

static void
invalid_text(void)
{
    check_at_offsets("\0", 1, false);               /* NUL */
    check_at_offsets("\xc0\xaf", 2, false);         /* overlong '/' */
    check_at_offsets("\xe0\x80\xaf", 3, false);     /* overlong */
    check_at_offsets("\xed\xa0\x80", 3, false);     /* surrogate U+D800 */
    check_at_offsets("\xf4\x90\x80\x80", 4, false); /* beyond U+10FFFF */
    check_at_offsets("\x80", 1, false);             /* stray continuation byte */
    check_at_offsets("\xff", 1, false);
    T_CHECK(!rs_utf8_valid("abc\xe2\x82", 5)); /* truncated at the end */
    T_CHECK(!rs_utf8_valid("abcdefgh\xe2\x82", 10));
}

int
main(void)
{
    T_RUN(valid_text);
    T_RUN(invalid_text);
    return T_DONE("common/utf8");
}
