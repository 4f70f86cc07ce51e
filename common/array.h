/* Growable arrays: the one place that knows how a caller's (pointer, count, capacity) triple
 * grows, so that modules keep their arrays as plain typed fields. */
#ifndef RS_COMMON_ARRAY_H
#define RS_COMMON_ARRAY_H

#include <stddef.h>

/* Makes room for `more` elements of `size` bytes in *arr, which holds `n` and has room for *cap:
 * the capacity doubles (from 16) until they fit. Returns 0 or -ENOMEM; *arr and *cap change
 * only on success. */
int rs_array_reserve(void **arr, size_t *cap, size_t n, size_t more, size_t size);

/* rs_array_reserve for a typed pointer `arr` (T *) and a size_t `cap`. */
#define RS_ARRAY_RESERVE(arr, cap, n, more)                                                        \
    rs_array_reserve((void **)&(arr), &(cap), (n), (more), sizeof *(arr))

#endif
