/* libFuzzer target for HTTP request parsing (server/http_request.c): arbitrary bytes, fed whole
 * and then in two pieces, with pipelined requests parsed one after the other; each request's
 * Accept-Encoding goes through rs_http_accepts_gzip. */
#include "server/http_request.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
parse(const char *data, size_t size, size_t split)
{
    struct rs_http_parser p;
    struct rs_http_request r;
    size_t used = 0;

    rs_http_parser_init(&p, 4096, 4096);
    for (int requests = 0; requests < 16 && size > 0; requests++) {
        size_t first = split < size ? split : size;
        int rc = rs_http_parser_feed(&p, data, first, &used);
        if (rc == RS_HTTP_NEED_MORE && first < size) {
            data += first;
            size -= first;
            rc = rs_http_parser_feed(&p, data, size, &used);
        } else if (rc == RS_HTTP_NEED_MORE)
            break;
        if (rc != RS_HTTP_COMPLETE)
            break;
        if (rs_http_parser_request(&p, &r) == 0 &&
            (!r.path || !r.query || !r.method || !r.accept_encoding))
            __builtin_trap();
        if (rs_http_parser_request(&p, &r) == 0)
            (void)rs_http_accepts_gzip(r.accept_encoding);
        if (used > size)
            __builtin_trap();
        data += used;
        size -= used;
        rs_http_parser_next(&p);
    }
    rs_http_parser_fini(&p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    parse((const char *)data, size, size);
    parse((const char *)data, size, size / 2);
    return 0;
}
