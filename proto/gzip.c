/* gzip of a buffer in memory (gzip.h): deflate into a buffer deflateBound sizes, in one call, or
 * in 1 MiB steps with a deadline checked between them. */
#include "proto/gzip.h"

#include "common/clock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Input compressed between two looks at the clock (rs_gzip_until). */
#define RS_GZIP_CHUNK (1u << 20)

int
rs_gzip_until(const void *in, size_t len, int level, uint64_t deadline_ns, uint8_t **out,
              size_t *out_len)
{
    z_stream z;
    uint8_t *buf;
    int rc = Z_OK;

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
    const Bytef *next = (const Bytef *)in;
    size_t left = len;
    z.next_out = buf;
    z.avail_out = (uInt)cap;
    /* in chunks, the deadline checked between them; the last one finishes the stream */
    while (rc == Z_OK) {
        size_t n = deadline_ns && left > RS_GZIP_CHUNK ? RS_GZIP_CHUNK : left;
        z.next_in = (Bytef *)(uintptr_t)next;
        z.avail_in = (uInt)n;
        next += n;
        left -= n;
        rc = deflate(&z, left ? Z_NO_FLUSH : Z_FINISH);
        if (rc == Z_OK && left && rs_clock_mono_ns() > deadline_ns) {
            deflateEnd(&z);
            free(buf);
            return -ETIMEDOUT;
        }
    }
    deflateEnd(&z);
    if (rc != Z_STREAM_END) { /* deflateBound promises room: only a broken zlib gets here */
        free(buf);
        return -ENOMEM;
    }
    *out = buf;
    *out_len = cap - z.avail_out;
    return 0;
}

int
rs_gzip(const void *in, size_t len, int level, uint8_t **out, size_t *out_len)
{
    return rs_gzip_until(in, len, level, 0, out, out_len);
}
