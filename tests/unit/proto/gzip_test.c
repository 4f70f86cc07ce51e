/* Unit tests of rs_gzip: what it writes is a gzip member (RFC 1952) that zlib's own inflate reads
 * back to the same bytes, at every level, for empty, small, repetitive and incompressible input. */
#include "common/clock.h"
#include "proto/gzip.h"
#include "tests/t.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Inflates a gzip member into out[cap]; returns its length or -1. */
static long
gunzip(const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 16) != Z_OK) /* gzip only, not zlib */
        return -1;
    z.next_in = (Bytef *)(uintptr_t)in;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    int rc = inflate(&z, Z_FINISH);
    long n = rc == Z_STREAM_END && z.avail_in == 0 ? (long)(cap - z.avail_out) : -1;
    inflateEnd(&z);
    return n;
}

static void
round_trip(const uint8_t *in, size_t len, int level, size_t *packed)
{
    uint8_t *gz = NULL, *back = malloc(len + 1);
    size_t gz_len = 0;

    T_OK(rs_gzip(in, len, level, &gz, &gz_len));
    T_CHECK(gz_len >= 18 && gz[0] == 0x1f && gz[1] == 0x8b && gz[2] == 8); /* magic, deflate */
    T_EQ(gunzip(gz, gz_len, back, len + 1), (long)len);
    T_CHECK(len == 0 || memcmp(back, in, len) == 0);
    *packed = gz_len;
    free(gz);
    free(back);
}

static void
levels_and_shapes(void)
{
    size_t n = 1 << 20, packed;
    uint8_t *json = malloc(n), *noise = malloc(n);
    uint32_t x = 12345;

    /* a heatmap-like answer: many short numbers */
    for (size_t i = 0; i < n; i++)
        json[i] = "[12.345,12.351,null,13.002],"[i % 28];
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        noise[i] = (uint8_t)(x >> 16);
    }
    round_trip((const uint8_t *)"", 0, 1, &packed);
    round_trip((const uint8_t *)"{}", 2, 9, &packed);
    for (int level = -1; level <= 9; level++) {
        round_trip(json, n, level, &packed);
        T_CHECK(level == 0 ? packed > n : packed < n / 20); /* 0: stored, not compressed */
    }
    round_trip(noise, n, 1, &packed);
    T_CHECK(packed > n); /* incompressible: a little larger, and still correct */
    free(json);
    free(noise);
}

/* rs_gzip_until: in chunks with a deadline far off, the same stream as one call (round trip);
 * with a deadline already past, -ETIMEDOUT after the first chunk, out-params untouched. */
static void
deadline(void)
{
    size_t n = 5u << 20, gz_len = 7, one_len = 0;
    uint8_t *in = malloc(n), *gz = (uint8_t *)"untouched", *one = NULL, *back = malloc(n + 1);
    uint32_t x = 99;

    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        in[i] = (uint8_t)("0123456789,[]"[(x >> 16) % 13]);
    }
    T_EQ(rs_gzip_until(in, n, 6, rs_clock_mono_ns() - 1, &gz, &gz_len), -ETIMEDOUT);
    T_CHECK(gz_len == 7 && strcmp((char *)gz, "untouched") == 0);
    T_EQ(rs_gzip_until(in, n, 6, rs_clock_mono_ns() + 60000000000ull, &gz, &gz_len), 0);
    T_EQ(gunzip(gz, gz_len, back, n + 1), (long)n);
    T_CHECK(memcmp(back, in, n) == 0);
    T_OK(rs_gzip(in, n, 6, &one, &one_len)); /* the chunked stream is as small as one call's */
    T_CHECK(gz_len <= one_len + 64);
    free(one);
    one = NULL;
    /* input of one chunk or less is compressed whole: the deadline is looked at between chunks */
    T_OK(rs_gzip_until("{}", 2, 6, rs_clock_mono_ns() - 1, &one, &one_len));
    free(one);
    free(gz);
    free(in);
    free(back);
}

static void
bad_level(void)
{
    uint8_t *gz = (uint8_t *)"untouched";
    size_t len = 7;
    T_EQ(rs_gzip("abc", 3, 42, &gz, &len), -ENOMEM);
    T_CHECK(len == 7 && strcmp((char *)gz, "untouched") == 0); /* out-params not written */
}

int
main(void)
{
    T_RUN(levels_and_shapes);
    T_RUN(deadline);
    T_RUN(bad_level);
    return T_DONE("proto/gzip");
}
