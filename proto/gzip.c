/* gzip of a buffer in memory (gzip.h): one deflate call into a buffer deflateBound sizes. */
#include "proto/gzip.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int
rs_gzip(const void *in, size_t len, int level, uint8_t **out, size_t *out_len)
{
    z_stream z;
    uint8_t *buf;
    int rc;

    if (len > UINT32_MAX) /* zlib's avail_in is 32 bits; nothing we compress is this large */
        return -ENOMEM;
    memset(&z, 0, sizeof z);
    /* windowBits 15 + 16: a gzip header and trailer instead of zlib's */
    if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -ENOMEM;
    size_t cap = deflateBound(&z, (uLong)len);
    if (!(buf = malloc(cap))) {
        deflateEnd(&z);
        return -ENOMEM;
    }
    z.next_in = (Bytef *)(uintptr_t)in;
    z.avail_in = (uInt)len;
    z.next_out = buf;
    z.avail_out = (uInt)cap;
    rc = deflate(&z, Z_FINISH);
    deflateEnd(&z);
    if (rc != Z_STREAM_END) { /* deflateBound promises room: only a broken zlib gets here */
        free(buf);
        return -ENOMEM;
    }
    *out = buf;
    *out_len = cap - z.avail_out;
    return 0;
}
