/* gzip (RFC 1952) of a buffer in memory, with zlib: the pprof export's body (proto/pprof.h) and
 * the REST server's compressed answers (server/http.c, Accept-Encoding: gzip). The lowest layer
 * that links zlib; no state, thread-safe. */
#ifndef RS_PROTO_GZIP_H
#define RS_PROTO_GZIP_H

#include <stddef.h>
#include <stdint.h>

/* Compresses in[len] at zlib `level` (1 fastest .. 9 smallest; -1 zlib's default) into a new
 * buffer (*out, caller frees with free(); *out_len its length). Returns 0, or -ENOMEM (out of
 * memory, or zlib refused: *out is not written). */
int rs_gzip(const void *in, size_t len, int level, uint8_t **out, size_t *out_len);

/* rs_gzip that stops once rs_clock_mono_ns() passes deadline_ns (0 = never), looking at the clock
 * after each MiB of input: a query's answer compressed on its thread ends at the query's
 * deadline instead of compressing on after the client stopped waiting. Returns 0, -ENOMEM, or
 * -ETIMEDOUT (nothing written). */
int rs_gzip_until(const void *in, size_t len, int level, uint64_t deadline_ns, uint8_t **out,
                  size_t *out_len);

#endif
