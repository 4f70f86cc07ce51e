/* Thousands grouping (see grouped.h). */
#include "common/grouped.h"

#include <stdio.h>

const char *
rs_grouped(double v, char *buf, size_t len)
{
    char digits[48];
    size_t n = (size_t)snprintf(digits, sizeof digits, "%.0f", v < 0 || v != v ? 0 : v), o = 0;

    if (len == 0)
        return buf;
    for (size_t i = 0; i < n && i < sizeof digits - 1 && o + 2 < len; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}
