/* Growable arrays (see array.h). */
#include "common/array.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

int
rs_array_reserve(void **arr, size_t *cap, size_t n, size_t more, size_t size)
{
    size_t want = n + more, nc = *cap ? *cap : 16;
    void *na;

    if (want <= *cap)
        return 0;
    if (want < n || size == 0)
        return -ENOMEM; /* overflow; or nothing to hold */
    while (nc < want) {
        if (nc > SIZE_MAX / 2)
            return -ENOMEM;
        nc *= 2;
    }
    if (nc > SIZE_MAX / size || !(na = realloc(*arr, nc * size)))
        return -ENOMEM;
    *arr = na;
    *cap = nc;
    return 0;
}
