/* Incremental HTTP/1.1 request parsing with hard limits, independent of any I/O: bytes in,
 * complete requests (or an HTTP error status) out. llhttp does the protocol; this module counts
 * request-line + header bytes (431), URL length (414) and body bytes (413), splits and
 * percent-decodes the path. Used by server/http.c per connection; fuzzed by
 * tests/fuzz/http_request_fuzz.c. Not thread-safe: one parser per connection. */
#ifndef RS_SERVER_HTTP_REQUEST_H
#define RS_SERVER_HTTP_REQUEST_H

#include <llhttp.h>
#include <stdbool.h>
#include <stddef.h>

#define RS_HTTP_URL_MAX 8192

struct rs_http_request {
    const char *method; /* "GET", ... */
    const char *path;   /* percent-decoded, without the query string */
    const char *query;  /* raw query string without '?', "" when none */
    const char *body;
    size_t body_len;
    const char *if_none_match;                /* the If-None-Match header, "" when absent */
    const char *host, *origin, *content_type; /* "" when absent */
    const char *authorization; /* the Authorization header, "" when absent (server/auth.c) */
    const char *accept_encoding; /* the Accept-Encoding header, "" when absent */
};

enum {
    RS_HTTP_NEED_MORE = 0, /* everything consumed; the request is not complete yet */
    RS_HTTP_COMPLETE = 1,  /* a whole request is ready (rs_http_parser_request) */
    /* otherwise: an HTTP error status (400, 413, 414, 431) — answer it and close */
};

/* The headers a request's fields carry (rs_http_request). */
enum rs_http_header_id {
    RS_HTTP_IF_NONE_MATCH,
    RS_HTTP_EXPECT,
    RS_HTTP_HOST,
    RS_HTTP_ORIGIN,
    RS_HTTP_CONTENT_TYPE,
    RS_HTTP_AUTHORIZATION,
    RS_HTTP_ACCEPT_ENCODING,
    RS_HTTP_HEADERS
};

struct rs_http_parser {
    llhttp_t llhttp;
    llhttp_settings_t settings;
    size_t max_header_bytes, max_body_bytes;
    bool in_message; /* a request has begun (its first byte arrived) */
    int error_status;
    /* the request target, allocated as it arrives (at most RS_HTTP_URL_MAX bytes) and freed
     * with the answer: an idle keep-alive connection holds none (it held 8 KiB each) */
    char *url;
    size_t url_len, url_cap;
    size_t header_bytes;
    char *body;                /* the request's body; freed when the next request starts, so an */
    size_t body_len, body_cap; /* idle keep-alive connection holds none (it held up to 16 MiB) */
    /* shared by every connection's parser: the bytes of body buffers allocated now, and their
     * bound (beyond it a body is refused with 503); NULL: no shared bound */
    size_t *bodies_total, bodies_max;
    char method[16];
    /* headers we act on (the first bytes of each; a repeated header's values are joined):
     * If-None-Match (ETag revalidation), Expect (100-continue), and for browser safety Host,
     * Origin and Content-Type; Authorization (a value longer than the buffer is cut, and so no
     * longer a valid token: "Bearer " + 256 characters at most fit) */
    char header_name[32];
    size_t header_name_len;
    struct rs_http_header {
        char value[320];
        size_t len;
    } headers[RS_HTTP_HEADERS];
    int capturing; /* the header whose value arrives now (enum rs_http_header_id), or -1 */
    /* The headers asked for "Expect: 100-continue" and the body has not come yet: the caller
     * sends "HTTP/1.1 100 Continue" once and clears it. A body over the limit is refused (413)
     * when its Content-Length arrives, before anything is sent. */
    bool continue_due;
};

void rs_http_parser_init(struct rs_http_parser *p, size_t max_header_bytes, size_t max_body_bytes);
void rs_http_parser_fini(struct rs_http_parser *p);

/* Parses data[len]. On RS_HTTP_COMPLETE, *used says how many bytes belong to this request (the
 * rest is the next, pipelined, request: feed it after rs_http_parser_next). */
int rs_http_parser_feed(struct rs_http_parser *p, const char *data, size_t len, size_t *used);

/* After RS_HTTP_COMPLETE: the request (pointers into the parser, valid until the next call).
 * Returns 0, or 400 when the path has a bad percent-escape, an escaped '/' (%2F would otherwise
 * become a path separator a route did not see), or is not UTF-8 once decoded, or when the query
 * holds a bad escape, an escaped NUL or bytes that are not UTF-8 once decoded. */
int rs_http_parser_request(struct rs_http_parser *p, struct rs_http_request *out);

/* Whether the connection may stay open after this request (HTTP/1.1 default, Connection:). */
bool rs_http_parser_keep_alive(const struct rs_http_parser *p);

/* Readies the parser for the next request on the same connection; frees the last body. */
void rs_http_parser_next(struct rs_http_parser *p);

/* Whether an Accept-Encoding value (RFC 9110 12.5.3: "gzip, deflate;q=0.5, *;q=0") accepts
 * gzip: "gzip" or "x-gzip" listed with a weight above 0, or "*" above 0 with gzip not listed.
 * Anything malformed counts as not accepting it. */
bool rs_http_accepts_gzip(const char *accept_encoding);

/* A short reason for the last protocol error (for 400 messages). */
const char *rs_http_parser_error(const struct rs_http_parser *p);

#endif
