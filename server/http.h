/* A small HTTP/1.1 server on the libuv loop, built on llhttp. It enforces hard limits
 * (request line + headers, body, connections in total and per peer address, the memory of all
 * bodies together), a request timeout (slowloris) and an idle keep-alive timeout, and answers
 * every protocol error itself with a JSON error document. Accept failures (out of file
 * descriptors) are counted and logged, rate-limited, and serving goes on.
 * Handlers get one complete request and must answer it exactly once with rs_http_respond*,
 * possibly later (after thread-pool work); the connection stays valid until then even if the
 * client leaves. Everything runs on the loop thread. */
#ifndef RS_SERVER_HTTP_H
#define RS_SERVER_HTTP_H

#include "server/counters.h"
#include "server/http_request.h"
#include "server/tls_stream.h"

#include <jansson.h>
#include <stddef.h>
#include <uv.h>

typedef struct rs_http rs_http;
typedef struct rs_http_conn rs_http_conn;

typedef void (*rs_http_handler)(void *arg, rs_http_conn *c, const struct rs_http_request *req);

struct rs_http_options {
    const char *host;            /* bind address, "127.0.0.1" */
    int port;                    /* 0 = any free port */
    size_t max_header_bytes;     /* request line + headers; beyond: 431 */
    size_t max_body_bytes;       /* beyond: 413 */
    unsigned request_timeout_ms; /* from the first byte to the full request; beyond: 408 */
    unsigned idle_timeout_ms;    /* keep-alive connection with no request; beyond: closed */
    unsigned max_connections;    /* beyond: the oldest idle or still-reading connection is
                                    closed for the new one (counted); if none, 503 and closed */
    unsigned max_connections_per_peer; /* from one IP address; beyond: 429 and closed */
    size_t max_body_total_bytes; /* request bodies held by all connections; beyond: 503 */
    unsigned long fd_limit;      /* the process's open-files limit; a connection whose
                                    descriptor falls in its last 5% (at least 16) is answered 503
                                    and closed, leaving those to the store, NNG and logs */
};

int rs_http_start(uv_loop_t *loop, const struct rs_http_options *opts, rs_http_handler handler,
                  void *arg, struct rs_counters *counters, rs_http **out);

/* The bound port (useful with port 0). */
int rs_http_port(const rs_http *h);

/* A nonzero number that is the same for every connection from one IP address (the port left
 * out) and differs between addresses but for hash collisions: the key per-client limits count
 * by. */
uint64_t rs_http_conn_peer_key(const rs_http_conn *c);

/* Adds "Retry-After: seconds" to the next response on c (with a 429 or 503), as its
 * rs_http_set_header line. */
void rs_http_retry_after(rs_http_conn *c, unsigned seconds);

/* Bytes of the answers the server of c is writing now, on every connection (head and body; over
 * HTTPS until the last record is written): what clients that read slowly hold of its memory.
 * Loop thread. */
uint64_t rs_http_response_bytes(const rs_http_conn *c);

/* Answers the current request of `c`. `body` is copied. */
void rs_http_respond(rs_http_conn *c, int status, const char *content_type, const char *body,
                     size_t len);

/* Answers 200 with a fixed body (a built-in asset) and its ETag (a quoted string), or 304 Not
 * Modified without a body when the request's If-None-Match holds that ETag. `extra_headers` are
 * more header lines, each ending in "\r\n", at most ~600 bytes (NULL: none); `body` is copied. */
void rs_http_respond_static(rs_http_conn *c, const char *content_type, const char *etag,
                            const char *extra_headers, const void *body, size_t len);

/* Adds one header line ("WWW-Authenticate: Bearer") to the answer of the current request only; a
 * second call replaces the first. Lines over 255 bytes or with CR/LF are ignored. */
void rs_http_set_header(rs_http_conn *c, const char *line);

/* The client's address as "IP:PORT" ("[IPv6]:PORT") into out, "?" when unknown. */
void rs_http_conn_peer(const rs_http_conn *c, char *out, size_t len);

/* Answers with a JSON document; takes the reference to `doc`. A 200 answer carries an ETag (a hash
 * of the body) and becomes 304 Not Modified, without a body, when the request's If-None-Match
 * holds that ETag. A 200 answer of 1 KiB or more goes gzip-compressed (Content-Encoding: gzip,
 * ETag "<hash>-gz") when the request's Accept-Encoding accepts gzip, with Vary: Accept-Encoding;
 * either ETag revalidates it. */
void rs_http_respond_json(rs_http_conn *c, int status, json_t *doc);

/* The text rs_http_respond_json sends for `doc` (takes the reference): a new string the caller
 * frees, NULL when out of memory (or doc is NULL). Any thread: a query's worker encodes its answer
 * there, not on the loop. */
char *rs_http_json_text(json_t *doc);
/* The json_dumps flags of rs_http_json_text, for answers encoded as text some other way. */
#define RS_HTTP_JSON_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(9))

/* rs_http_respond_json with the document's text from rs_http_json_text (borrowed; NULL answers
 * 500 "out of memory"). Loop thread. */
void rs_http_respond_json_text(rs_http_conn *c, int status, const char *text);

/* A 200 JSON answer's text prepared off the loop (a query's worker): its ETag's hash and, for a
 * client that accepts gzip, its compressed form — hashing and compressing a 56 MB answer on the
 * loop stalled every other connection meanwhile. */
struct rs_http_json_prepared {
    uint64_t hash;
    uint8_t *gz; /* NULL: send the text (not asked for, too small, or no smaller) */
    size_t gz_len;
};

/* Whether the request on c accepts gzip (its Accept-Encoding), for rs_http_json_prepare. Loop
 * thread, while the request is being answered. */
bool rs_http_conn_accepts_gzip(const rs_http_conn *c);

/* Fills *out for text[len]: the hash, and the gzip form when `gzip` (from
 * rs_http_conn_accepts_gzip), the text is long enough to gain and if_none_match (NULL: none)
 * does not name it already (a 304 sends no body), compressed at the level
 * rs_http_respond_json_text uses and stopped at deadline_ns (0 = none). Returns 0, -ENOMEM or
 * -ETIMEDOUT (then out->gz is NULL: the text goes). Any thread; out->gz is the caller's. */
int rs_http_json_prepare(const char *text, size_t len, bool gzip, const char *if_none_match,
                         uint64_t deadline_ns, struct rs_http_json_prepared *out);

/* rs_http_respond_json_text(c, 200, text) with the work done already (rs_http_json_prepare):
 * If-None-Match gives 304, the gzip form goes when prepared, else the text. Borrows all. Loop
 * thread. */
void rs_http_respond_json_prepared(rs_http_conn *c, const char *text, size_t len,
                                   const struct rs_http_json_prepared *pre);

/* The text of the error document rs_http_respond_error sends: a new string the caller frees,
 * NULL when out of memory. Any thread. */
char *rs_http_error_text(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Answers {"error": {"status": N, "message": "..."}} with the given status. */
void rs_http_respond_error(rs_http_conn *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Serves HTTPS with `conf` (tls_stream.h) on connections accepted from now on; NULL: plain HTTP.
 * Holds a reference to `conf` (released on the next call or at close): connections already open
 * keep the configuration they started with, so a reload changes only new ones. A TLS handshake
 * must complete within request_timeout_ms; plain HTTP on an HTTPS port gets a plain 400 and is
 * closed. Loop thread only. */
void rs_http_set_tls(rs_http *h, rs_tls_conf *conf);

/* Stops listening and closes every connection (pending responses are dropped when they come).
 * The handles finish closing when the loop runs; rs_http_free after that. */
void rs_http_close(rs_http *h);
void rs_http_free(rs_http *h);

#endif
