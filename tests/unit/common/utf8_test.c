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

static const char *
esc(const char *s, size_t len, size_t out_len)
{
    static char out[256];
    rs_utf8_escape(s, len, out, out_len);
    return out;
}

/* What a terminal or a log would act on is shown, nothing else changes. */
static void
escaping(void)
{
    char out[64];

    T_CHECK(strcmp(esc("gemm_kernel<float>", 18, 256), "gemm_kernel<float>") == 0);
    T_CHECK(strcmp(esc("\x1b[2Jclear", 9, 256), "\\x1b[2Jclear") == 0);
    T_CHECK(strcmp(esc("host\n2026 info RS-X", 19, 256), "host\\x0a2026 info RS-X") == 0);
    T_CHECK(strcmp(esc("a\tb\x7f", 4, 256), "a\\x09b\\x7f") == 0);
    T_CHECK(strcmp(esc("\xc2\x9b" "1m", 4, 256), "\\xc2\\x9b1m") == 0); /* C1 CSI */
    T_CHECK(strcmp(esc("caf\xc3\xa9 \xe2\x9c\x93", 9, 256), "caf\xc3\xa9 \xe2\x9c\x93") == 0);
    T_CHECK(strcmp(esc("\xff" "x\xe2\x9c", 4, 256), "\\xffx\\xe2\\x9c") == 0); /* not UTF-8 */
    T_CHECK(strcmp(esc("a\0b", 3, 256), "a\\x00b") == 0);
    T_EQ(rs_utf8_escape("ab\ncd", 5, out, sizeof out), 8);
    /* cut between characters or escapes, never inside one */
    T_EQ(rs_utf8_escape("ab\ncd", 5, out, 5), 8);
    T_CHECK(strcmp(out, "ab") == 0);
    T_EQ(rs_utf8_escape("\xc3\xa9\xc3\xa9", 4, out, 4), 4);
    T_CHECK(strcmp(out, "\xc3\xa9") == 0);
    T_EQ(rs_utf8_escape("x", 1, out, 0), 1);
    T_CHECK(rs_utf8_valid("caf\xc3\xa9", 5) && !rs_utf8_valid("a\0b", 3));
}

int
main(void)
{
    T_RUN(valid_text);
    T_RUN(invalid_text);
    T_RUN(escaping);
    return T_DONE("common/utf8");
}
