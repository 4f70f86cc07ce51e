/* UTF-8 validation: strings from the wire reach JSON output, which must be valid UTF-8. And
 * escaping: the same strings (kernel, host, GPU names) must not act on a terminal or forge a log
 * line when printed. */
#ifndef RS_COMMON_UTF8_H
#define RS_COMMON_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* True when s[0..len) is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF) without
 * NUL bytes. */
bool rs_utf8_valid(const char *s, size_t len);

/* Copies s[0..len) into out with everything a terminal or a log reader would act on shown as \xNN
 * instead: C0 controls (newline, tab, ESC, ...), DEL, C1 controls (U+0080 - U+009F) and each byte
 * that is not part of well-formed UTF-8. Other text, multi-byte characters included, is kept.
 * Writes at most out_len - 1 bytes and a NUL, cutting only between characters or escapes.
 * Returns the whole escaped text's length (as snprintf does: >= out_len means cut). */
size_t rs_utf8_escape(const char *s, size_t len, char *out, size_t out_len);

/* The value of one hexadecimal digit (either case), or -1: for percent escapes and hashes. */
static inline int
rs_hex_digit(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

#endif
