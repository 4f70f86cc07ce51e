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

#endif
