/* A time span that grows to cover what is added: the first and last time of a set of records. */
#ifndef RS_COMMON_SPAN_H
#define RS_COMMON_SPAN_H

#include <stdint.h>

/* Widens [*first, *last] to cover [start, end]; *first == 0 is an empty span. */
static inline void
rs_span_cover(uint64_t *first, uint64_t *last, uint64_t start, uint64_t end)
{
    if (*first == 0 || start < *first)
        *first = start;
    if (end > *last)
        *last = end;
}

#endif
