/* UTF-8 validation: strings from the wire reach JSON output, which must be valid UTF-8. */
#ifndef RS_COMMON_UTF8_H
#define RS_COMMON_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* True when s[0..len) is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF) without
 * NUL bytes. */
bool rs_utf8_valid(const char *s, size_t len);

#endif
