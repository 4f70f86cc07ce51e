/* A small HTTP/1.1 server on the libuv loop, built on llhttp. It enforces hard limits
 * (request line + headers, body, connections), a request timeout (slowloris) and an idle
 * keep-alive timeout, and answers every protocol error itself with a JSON error document.
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
    unsigned max_connections;    /* beyond: new connections get 503 and are closed */
};

int rs_http_start(uv_loop_t *loop, const struct rs_http_options *opts, rs_http_handler handler,
                  void *arg, struct rs_counters *counters, rs_http **out);

/* The bound port (useful with port 0). */
int rs_http_port(const rs_http *h);

/* Answers the current request of `c`. `body` is copied. */
void rs_http_respond(rs_http_conn *c, int status, const char *content_type, const char *body,
                     size_t len);

/* Adds one header line ("WWW-Authenticate: Bearer") to the answer of the current request only; a
 * second call replaces the first. Lines over 255 bytes or with CR/LF are ignored. */
void rs_http_set_header(rs_http_conn *c, const char *line);

/* The client's address as "IP:PORT" ("[IPv6]:PORT") into out, "?" when unknown. */
void rs_http_conn_peer(const rs_http_conn *c, char *out, size_t len);

/* Answers with a JSON document; takes the reference to `doc`. A 200 answer carries an ETag (a hash
 * of the body) and becomes 304 Not Modified, without a body, when the request's If-None-Match
 * holds that ETag. */
void rs_http_respond_json(rs_http_conn *c, int status, json_t *doc);

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
