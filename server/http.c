/* HTTP/1.1 connections on libuv + llhttp, with limits and timeouts (see http.h). */
#include "server/http.h"

#include "common/array.h"
#include "common/hash.h"
#include "common/log.h"
#include "proto/gzip.h"
#include "server/conn_limits.h"
#include "server/tls_stream.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define READ_CHUNK 65536
/* JSON answers at least this long go gzip-compressed to a client that accepts it (smaller ones
 * gain less than a packet), at zlib's fastest level: the loop thread compresses, and the
 * dashboard's numbers shrink 4-6x at level 1 already (docs/BENCHMARKS.md "Dashboard"). */
#define RS_HTTP_GZIP_MIN_BYTES 1024
#define RS_HTTP_GZIP_LEVEL 1

enum conn_state { CONN_IDLE, CONN_READING, CONN_BUSY, CONN_WRITING, CONN_DRAINING };

struct rs_http_conn {
    uv_tcp_t tcp;
    uv_timer_t timer;
    uv_shutdown_t shutdown;
    struct rs_http_parser parser;
    rs_http *http;
    struct rs_http_conn *prev, *next;
    enum conn_state state;
    int handles_open; /* tcp + timer; freed when both closed and not busy */
    bool closing;     /* close after the current write, or now */
    bool keep_alive;
    char extra_header[256]; /* rs_http_set_header: for the current answer only, "" when none */
    char *pending; /* bytes received after a complete request (pipelining) */
    size_t pending_len;
    uint64_t peer_key;      /* rs_http_conn_peer_key */
    bool peer_counted;      /* in http->peers */
    bool refused;           /* in http->n_refused (refuse) */
    rs_tls_stream *tls; /* HTTPS: the TLS layer between the socket and the parser; NULL: HTTP */
    char peer[48];      /* HTTPS: the client's address, for logs (it may be gone by then) */
    size_t response_bytes; /* of the answer being written (rs_http_response_bytes) */
};

struct rs_http {
    uv_loop_t *loop;
    uv_tcp_t listener;
    struct rs_http_options opts;
    rs_http_handler handler;
    void *arg;
    struct rs_counters *counters;
    rs_http_conn *conns; /* newest first */
    unsigned n_conns;
    unsigned n_refused; /* of n_conns: refused as they arrived, closing after their answer */
    rs_peer_counts *peers; /* connections per peer address */
    size_t bodies_total;   /* bytes of request bodies held (rs_http_parser.bodies_total) */
    uint64_t response_bytes; /* of answers being written, all connections */
    int port;
    bool closed;
    rs_tls_conf *tls; /* serve HTTPS with it (rs_http_set_tls); NULL: plain HTTP */
    /* What every connection reads into. One is enough: the loop reads one connection at a time
     * and on_read is done with the bytes when it returns (the parser, the TLS layer and the
     * pipelining buffer copy what they keep). Each connection had 64 KiB of its own: 10,000 idle
     * keep-alive connections held 640 MiB of address space (docs/BENCHMARKS.md "Idle HTTP
     * connections"). */
    char read_buf[READ_CHUNK];
};

static void feed(rs_http_conn *c, const char *data, size_t len);
static void tls_read(rs_http_conn *c, const char *data, size_t len);
static int tls_send(rs_http_conn *c, const void *data, size_t len,
                    void (*then)(rs_http_conn *c, int status));
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

static const char *
reason_phrase(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 304:
        return "Not Modified";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 413:
        return "Payload Too Large";
    case 414:
        return "URI Too Long";
    case 415:
        return "Unsupported Media Type";
    case 429:
        return "Too Many Requests";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    default:
        return "Unknown";
    }
}

/* ---- connection lifetime ----------------------------------------------------------------------
 */

/* The connection's answer is written, or will never be: its bytes leave the total. */
static void
response_release(rs_http_conn *c)
{
    c->http->response_bytes -= c->response_bytes;
    c->response_bytes = 0;
}

static void
conn_free_if_done(rs_http_conn *c)
{
    if (c->handles_open > 0 || c->state == CONN_BUSY)
        return;
    response_release(c);
    rs_http_parser_fini(&c->parser);
    rs_tls_stream_free(&c->tls);
    free(c->pending);
    free(c);
}

static void
on_handle_closed(uv_handle_t *h)
{
    rs_http_conn *c = h->data;
    c->handles_open--;
    conn_free_if_done(c);
}

static void
conn_close(rs_http_conn *c)
{
    rs_http *h = c->http;

    if (c->closing)
        return;
    c->closing = true;
    if (c->prev)
        c->prev->next = c->next;
    else if (h->conns == c)
        h->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
    h->n_conns--;
    if (c->refused)
        h->n_refused--;
    c->refused = false;
    RS_COUNT_SUB(h->counters, http_connections_now, 1);
    if (c->peer_counted)
        rs_peer_counts_give(h->peers, c->peer_key);
    c->peer_counted = false;
    uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
    uv_close((uv_handle_t *)&c->timer, on_handle_closed);
}

static void
on_timeout(uv_timer_t *t)
{
    rs_http_conn *c = t->data;

    if (c->state == CONN_DRAINING) {
        conn_close(c);
        return;
    }
    RS_COUNT(c->http->counters, http_timeouts);
    if (c->tls && !rs_tls_stream_established(c->tls))
        RS_COUNT(c->http->counters, http_tls_timeouts); /* stalled in the handshake */
    if (c->state == CONN_READING) {
        /* Slow or stalled request (slowloris): tell the client, then close. */
        c->keep_alive = false;
        rs_http_respond_error(c, 408, "request not received within %u ms",
                              c->http->opts.request_timeout_ms);
    } else
        conn_close(c);
}

static void
arm_timer(rs_http_conn *c, unsigned ms)
{
    uv_timer_start(&c->timer, on_timeout, ms, 0);
}

/* ---- writing responses ------------------------------------------------------------------------
 */

struct write_req {
    uv_write_t req;
    rs_http_conn *conn;
    char data[];
};

#define LINGER_MS 1000

static void
on_shutdown(uv_shutdown_t *req, int status)
{
    rs_http_conn *c = req->data;

    if (c->closing)
        return;
    if (status < 0) {
        conn_close(c);
        return;
    }
    arm_timer(c, LINGER_MS);
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

/* Closing right after an error answer while the client still sends (a body over the limit)
 * makes the kernel reset the connection and the client never sees the answer: shut down our
 * side, discard what still arrives for a moment, then close. */
static void
linger_close(rs_http_conn *c)
{
    c->state = CONN_DRAINING;
    if (c->tls) {
        rs_tls_stream_close_notify(c->tls);
        tls_send(c, NULL, 0, NULL);
    }
    c->shutdown.data = c;
    if (uv_shutdown(&c->shutdown, (uv_stream_t *)&c->tcp, on_shutdown) != 0)
        conn_close(c);
}

/* The answer is written (or failed): next request, or close. */
static void
answer_written(rs_http_conn *c, int status)
{
    response_release(c);
    if (c->closing)
        return;
    if (status < 0) {
        conn_close(c);
        return;
    }
    if (!c->keep_alive) {
        linger_close(c);
        return;
    }
    c->state = CONN_IDLE;
    rs_http_parser_next(&c->parser);
    arm_timer(c, c->http->opts.idle_timeout_ms);
    if (c->pending_len) {
        char *p = c->pending;
        size_t n = c->pending_len;
        c->pending = NULL;
        c->pending_len = 0;
        feed(c, p, n);
        free(p);
    } else
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

static void
on_written(uv_write_t *req, int status)
{
    struct write_req *w = (struct write_req *)req;
    rs_http_conn *c = w->conn;

    free(w);
    answer_written(c, status);
}

/* Writes the response; `etag` adds an ETag header (NULL: none), `extra` more header lines, each
 * ending in CRLF (NULL: none). */
static void
respond_with(rs_http_conn *c, int status, const char *content_type, const char *etag,
             const char *extra, const char *body, size_t len)
{
    char head[1536], tag[64] = "";
    struct write_req *w;
    uv_buf_t buf;
    int n;

    if (c->state == CONN_BUSY)
        c->state = CONN_WRITING;
    if (c->closing) { /* the client left while we worked */
        c->state = CONN_WRITING;
        conn_free_if_done(c);
        return;
    }
    c->state = CONN_WRITING;
    uv_timer_stop(&c->timer);
    RS_COUNT(c->http->counters, http_requests);
    if (status >= 400)
        RS_COUNT(c->http->counters, http_errors);
    if (etag)
        snprintf(tag, sizeof tag, "ETag: %s\r\n", etag);
    n = snprintf(head, sizeof head,
                 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s%s%s%s"
                 "Cache-Control: no-cache\r\nConnection: %s\r\n\r\n",
                 status, reason_phrase(status), content_type, len, tag, extra ? extra : "",
                 c->extra_header, c->extra_header[0] ? "\r\n" : "",
                 c->keep_alive ? "keep-alive" : "close");
    c->extra_header[0] = '\0';
    if (n < 0 || (size_t)n >= sizeof head) { /* a programmer's error: extra headers too long */
        conn_close(c);
        return;
    }
    w = malloc(sizeof *w + (size_t)n + len);
    if (!w) {
        conn_close(c);
        return;
    }
    w->conn = c;
    memcpy(w->data, head, (size_t)n);
    memcpy(w->data + n, body, len);
    response_release(c); /* (none pending: one answer at a time) */
    c->response_bytes = (size_t)n + len;
    c->http->response_bytes += c->response_bytes;
    if (c->tls) { /* the answer leaves encrypted; on_written follows its last byte */
        if (tls_send(c, w->data, (size_t)n + len, answer_written) != 0)
            conn_close(c);
        free(w);
        return;
    }
    buf = uv_buf_init(w->data, (unsigned)((size_t)n + len));
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &buf, 1, on_written) != 0) {
        free(w);
        conn_close(c);
    }
}

static void
respond(rs_http_conn *c, int status, const char *content_type, const char *etag, const char *body,
        size_t len)
{
    respond_with(c, status, content_type, etag, NULL, body, len);
}

void
rs_http_respond_static(rs_http_conn *c, const char *content_type, const char *etag,
                       const char *extra_headers, const void *body, size_t len)
{
    const char *inm = c->parser.headers[RS_HTTP_IF_NONE_MATCH].value;

    if (inm[0] && strstr(inm, etag))
        respond_with(c, 304, content_type, etag, extra_headers, "", 0);
    else
        respond_with(c, 200, content_type, etag, extra_headers, body, len);
}

uint64_t
rs_http_conn_peer_key(const rs_http_conn *c)
{
    return c->peer_key;
}

void
rs_http_retry_after(rs_http_conn *c, unsigned seconds)
{
    char line[40];

    snprintf(line, sizeof line, "Retry-After: %u", seconds);
    rs_http_set_header(c, line);
}

void
rs_http_respond(rs_http_conn *c, int status, const char *content_type, const char *body, size_t len)
{
    respond(c, status, content_type, NULL, body, len);
}

void
rs_http_set_header(rs_http_conn *c, const char *line)
{
    if (strlen(line) < sizeof c->extra_header && !strpbrk(line, "\r\n"))
        snprintf(c->extra_header, sizeof c->extra_header, "%s", line);
}

void
rs_http_conn_peer(const rs_http_conn *c, char *out, size_t len)
{
    struct sockaddr_storage ss;
    int n = sizeof ss;
    char ip[64];

    snprintf(out, len, "?");
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &n) != 0)
        return;
    if (ss.ss_family == AF_INET6 &&
        uv_ip6_name((const struct sockaddr_in6 *)&ss, ip, sizeof ip) == 0)
        snprintf(out, len, "[%s]:%d", ip, ntohs(((const struct sockaddr_in6 *)&ss)->sin6_port));
    else if (ss.ss_family == AF_INET &&
             uv_ip4_name((const struct sockaddr_in *)&ss, ip, sizeof ip) == 0)
        snprintf(out, len, "%s:%d", ip, ntohs(((const struct sockaddr_in *)&ss)->sin_port));
}

char *
rs_http_json_text(json_t *doc)
{
    char *text = doc ? json_dumps(doc, RS_HTTP_JSON_FLAGS) : NULL;

    json_decref(doc);
    return text;
}

void
rs_http_respond_json(rs_http_conn *c, int status, json_t *doc)
{
    char *text = rs_http_json_text(doc);

    rs_http_respond_json_text(c, status, text);
    free(text);
}

bool
rs_http_conn_accepts_gzip(const rs_http_conn *c)
{
    return rs_http_accepts_gzip(c->parser.headers[RS_HTTP_ACCEPT_ENCODING].value);
}

/* The part both ETags of an answer share: "\"<hash>" (see rs_http_respond_json_prepared). */
static void
etag_prefix(uint64_t hash, char out[24])
{
    snprintf(out, 24, "\"%016llx", (unsigned long long)hash);
}

int
rs_http_json_prepare(const char *text, size_t len, bool gzip, const char *if_none_match,
                     uint64_t deadline_ns, struct rs_http_json_prepared *out)
{
    uint8_t *gz = NULL;
    size_t gz_len = 0;
    char plain[24];
    int rc = 0;

    out->hash = rs_hash_fnv1a64(text, len);
    out->gz = NULL;
    out->gz_len = 0;
    etag_prefix(out->hash, plain);
    if (!gzip || len < RS_HTTP_GZIP_MIN_BYTES ||
        (if_none_match && if_none_match[0] && strstr(if_none_match, plain)))
        return 0;
    if ((rc = rs_gzip_until(text, len, RS_HTTP_GZIP_LEVEL, deadline_ns, &gz, &gz_len)) != 0)
        return rc;
    if (gz_len < len) {
        out->gz = gz;
        out->gz_len = gz_len;
    } else
        free(gz);
    return 0;
}

void
rs_http_respond_json_prepared(rs_http_conn *c, const char *text, size_t len,
                              const struct rs_http_json_prepared *pre)
{
    /* Pollers (schedulers) revalidate with If-None-Match and get 304 while nothing changed. The
     * gzip form of an answer is another representation, so another (strong) ETag: "<hash>-gz";
     * either revalidates, since both name the same document. */
    bool may_zip = len >= RS_HTTP_GZIP_MIN_BYTES;
    bool zip = may_zip && rs_http_conn_accepts_gzip(c);
    char plain[24], etag[32], etag_gz[40];
    etag_prefix(pre->hash, plain);
    snprintf(etag, sizeof etag, "%s\"", plain);
    snprintf(etag_gz, sizeof etag_gz, "%s-gz\"", plain);
    const char *inm = c->parser.headers[RS_HTTP_IF_NONE_MATCH].value;
    const char *vary = may_zip ? "Vary: Accept-Encoding\r\n" : NULL;
    if (inm[0] && strstr(inm, plain))
        respond_with(c, 304, "application/json", zip ? etag_gz : etag, vary, "", 0);
    else if (zip && pre->gz)
        respond_with(c, 200, "application/json", etag_gz,
                     "Content-Encoding: gzip\r\nVary: Accept-Encoding\r\n", (const char *)pre->gz,
                     pre->gz_len);
    else /* not asked for, too small, no memory, or no smaller: the plain form */
        respond_with(c, 200, "application/json", etag, vary, text, len);
}

void
rs_http_respond_json_text(rs_http_conn *c, int status, const char *text)
{
    static const char oom[] = "{\"error\":{\"status\":500,\"message\":\"out of memory\"}}";
    struct rs_http_json_prepared pre;

    if (!text) {
        rs_http_respond(c, 500, "application/json", oom, sizeof oom - 1);
        return;
    }
    size_t len = strlen(text);
    if (status != 200) {
        respond(c, status, "application/json", NULL, text, len);
        return;
    }
    /* here on the loop: the caller had nothing prepared (small answers, the answer cache's) */
    rs_http_json_prepare(text, len, rs_http_conn_accepts_gzip(c),
                         c->parser.headers[RS_HTTP_IF_NONE_MATCH].value, 0, &pre);
    rs_http_respond_json_prepared(c, text, len, &pre);
    free(pre.gz);
}

static json_t *
error_doc(int status, const char *fmt, va_list ap)
{
    char msg[512];

    vsnprintf(msg, sizeof msg, fmt, ap);
    return json_pack("{s:{s:i, s:s}}", "error", "status", status, "message", msg);
}

char *
rs_http_error_text(int status, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    json_t *doc = error_doc(status, fmt, ap);
    va_end(ap);
    return rs_http_json_text(doc);
}

void
rs_http_respond_error(rs_http_conn *c, int status, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    json_t *doc = error_doc(status, fmt, ap);
    va_end(ap);
    rs_http_respond_json(c, status, doc);
}

/* ---- requests -------------------------------------------------------------------------------- */

static void
dispatch(rs_http_conn *c)
{
    struct rs_http_request req;

    uv_timer_stop(&c->timer);
    c->keep_alive = rs_http_parser_keep_alive(&c->parser);
    c->state = CONN_BUSY;
    if (rs_http_parser_request(&c->parser, &req) != 0) {
        rs_http_respond_error(c, 400,
                              "bad URL: a malformed escape, an escaped '/' in the path, an "
                              "escaped NUL, or bytes that are not UTF-8 once decoded");
        return;
    }
    c->http->handler(c->http->arg, c, &req);
}

static void
fail_request(rs_http_conn *c, int status)
{
    const struct rs_http_options *o = &c->http->opts;

    c->keep_alive = false;
    c->state = CONN_BUSY;
    switch (status) {
    case 400:
        rs_http_respond_error(c, 400, "malformed HTTP request: %s",
                              rs_http_parser_error(&c->parser));
        break;
    case 413:
        rs_http_respond_error(c, 413, "request body exceeds %zu bytes", o->max_body_bytes);
        break;
    case 414:
        rs_http_respond_error(c, 414, "request target exceeds %d bytes", RS_HTTP_URL_MAX - 1);
        break;
    case 431:
        rs_http_respond_error(c, 431, "request line and headers exceed %zu bytes",
                              o->max_header_bytes);
        break;
    case 503:
        RS_COUNT(c->http->counters, http_body_budget_full);
        rs_http_retry_after(c, 1);
        rs_http_respond_error(c, 503,
                              "the server holds %zu bytes of request bodies already "
                              "(http-max-body-total-mb): send it again later",
                              o->max_body_total_bytes);
        break;
    default:
        rs_http_respond_error(c, status, "request failed");
        break;
    }
}

static void
feed(rs_http_conn *c, const char *data, size_t len)
{
    size_t used = len;
    int rc = rs_http_parser_feed(&c->parser, data, len, &used);

    if (c->state == CONN_IDLE && c->parser.in_message) {
        c->state = CONN_READING; /* first bytes of a request: the request timeout starts */
        arm_timer(c, c->http->opts.request_timeout_ms);
    }
    if (rc == RS_HTTP_NEED_MORE) {
        if (c->parser.continue_due) { /* the client waits for this before it sends the body */
            static const char go_on[] = "HTTP/1.1 100 Continue\r\n\r\n";
            uv_buf_t b = uv_buf_init((char *)go_on, sizeof go_on - 1);
            c->parser.continue_due = false;
            if (c->tls) /* a partial write would break the TLS records: queue it whole */
                tls_send(c, go_on, sizeof go_on - 1, NULL);
            else
                uv_try_write((uv_stream_t *)&c->tcp, &b, 1); /* lost: the client sends anyway */
        }
        return;
    }
    uv_read_stop((uv_stream_t *)&c->tcp);
    if (rc != RS_HTTP_COMPLETE) {
        fail_request(c, rc);
        return;
    }
    if (used < len && (c->pending = malloc(len - used))) {
        memcpy(c->pending, data + used, len - used);
        c->pending_len = len - used;
    }
    dispatch(c);
}

/* ---- HTTPS: the TLS layer between the socket and the parser ----------------------------------
 */

struct tls_write {
    uv_write_t req;
    rs_http_conn *conn;
    void (*then)(rs_http_conn *c, int status); /* answer_written for an answer, or NULL */
    uint8_t *data;
};

static void
on_tls_written(uv_write_t *req, int status)
{
    struct tls_write *t = (struct tls_write *)req;
    rs_http_conn *c = t->conn;
    void (*then)(rs_http_conn *, int) = t->then;

    free(t->data);
    free(t);
    if (then)
        then(c, status);
    else if (status < 0 && !c->closing)
        conn_close(c);
}

/* Encrypts `len` bytes of plaintext (none: only what the TLS layer has queued, a handshake
 * answer or an alert) and writes the ciphertext; `then` runs when it is written. */
static int
tls_send(rs_http_conn *c, const void *data, size_t len, void (*then)(rs_http_conn *c, int status))
{
    struct tls_write *t;
    uv_buf_t buf;
    int rc;

    if (len && (rc = rs_tls_stream_write(c->tls, data, len)) != 0)
        return rc;
    if (!(t = calloc(1, sizeof *t)))
        return -ENOMEM;
    rs_tls_stream_output(c->tls, &t->data, &len);
    if (!t->data && !then) {
        free(t);
        return 0;
    }
    t->conn = c;
    t->then = then;
    buf = uv_buf_init((char *)t->data, (unsigned)len);
    if ((rc = uv_write(&t->req, (uv_stream_t *)&c->tcp, &buf, 1, on_tls_written)) != 0) {
        free(t->data);
        free(t);
    }
    return rc;
}

static void
peer_name(rs_http_conn *c, char *out, size_t len)
{
    struct sockaddr_storage sa;
    int n = sizeof sa;

    snprintf(out, len, "?");
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&sa, &n) != 0)
        return;
    if (sa.ss_family == AF_INET6)
        uv_ip6_name((struct sockaddr_in6 *)&sa, out, len);
    else
        uv_ip4_name((struct sockaddr_in *)&sa, out, len);
}

static void
tls_failed(rs_http_conn *c, int rc)
{
    const char *peer = c->peer;

    uv_read_stop((uv_stream_t *)&c->tcp);
    if (rc == RS_TLS_E_CLOSED) {
        conn_close(c);
        return;
    }
    if (rc == RS_TLS_E_PLAINTEXT) {
        /* Say so in plain HTTP: the client's user learns to use https://, then close. */
        RS_COUNT(c->http->counters, http_tls_plaintext);
        rs_log_limited(1, RS_LOG_WARN, "RS-HTTP-TLS", "plain HTTP from %s on the HTTPS port",
                       peer);
        rs_tls_stream_free(&c->tls);
        c->keep_alive = false;
        c->state = CONN_BUSY;
        rs_http_respond_error(c, 400, "this port serves HTTPS: use an https:// URL");
        return;
    }
    RS_COUNT(c->http->counters, http_tls_failures);
    rs_log_limited(1, RS_LOG_WARN, "RS-HTTP-TLS", "TLS with %s failed: %s", peer,
                   rs_tls_stream_error(c->tls));
    if (rc != -ENOMEM && tls_send(c, NULL, 0, NULL) == 0) { /* the alert, then close */
        linger_close(c);
        return;
    }
    conn_close(c);
}

/* Ciphertext from the socket: decrypts every complete record and feeds the plaintext to the
 * parser in one piece (feed keeps what follows a complete request for later). */
static void
tls_read(rs_http_conn *c, const char *data, size_t len)
{
    bool was_established = rs_tls_stream_established(c->tls);
    char *plain = NULL;
    size_t plain_len = 0, plain_cap = 0, n = 0;
    int rc = rs_tls_stream_input(c->tls, data, len);

    do {
        plain_len += n;
        if (rc == 0 && RS_ARRAY_RESERVE(plain, plain_cap, plain_len, READ_CHUNK) != 0)
            rc = -ENOMEM;
        if (rc == 0)
            rc = rs_tls_stream_read(c->tls, plain + plain_len, READ_CHUNK, &n);
    } while (rc == 0 && n > 0);
    if (rc != 0) {
        free(plain);
        tls_failed(c, rc);
        return;
    }
    if (tls_send(c, NULL, 0, NULL) != 0) { /* the handshake's answer */
        free(plain);
        conn_close(c);
        return;
    }
    if (!was_established && rs_tls_stream_established(c->tls)) {
        RS_COUNT(c->http->counters, http_tls_handshakes);
        arm_timer(c, c->http->opts.idle_timeout_ms); /* now an idle keep-alive connection */
    }
    if (plain_len)
        feed(c, plain, plain_len);
    free(plain);
}

void
rs_http_set_tls(rs_http *h, rs_tls_conf *conf)
{
    if (conf)
        rs_tls_conf_hold(conf);
    rs_tls_conf_release(h->tls);
    h->tls = conf;
}

/* ---- accepting ------------------------------------------------------------------------------- */

static void
on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    rs_http_conn *c = h->data;
    *buf = uv_buf_init(c->http->read_buf, sizeof c->http->read_buf);
}

static void
on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    rs_http_conn *c = s->data;

    if (c->state == CONN_DRAINING) {
        if (nread < 0)
            conn_close(c);
        return; /* discard */
    }
    if (nread < 0) {
        if (c->state != CONN_BUSY && c->state != CONN_WRITING)
            conn_close(c);
        else
            c->keep_alive = false; /* finish the response, then close */
        return;
    }
    if (nread > 0 && c->state != CONN_BUSY && c->state != CONN_WRITING) {
        if (c->tls)
            tls_read(c, buf->base, (size_t)nread);
        else
            feed(c, buf->base, (size_t)nread);
    }
}

/* Descriptors kept for everything but HTTP connections: 5% of the limit, at least 16. */
static unsigned long
fd_reserve(unsigned long limit)
{
    return limit / 20 > 16 ? limit / 20 : 16;
}

/* A connection refused as it arrives: the caller answers it, and it closes after the answer.
 * Meanwhile it does not count toward max_connections: under load the answers to a crowd's
 * refused connections wait a loop turn or more, and counted, 844 of them (429 per peer) kept the
 * count over 1,024 — each new client then pushed out a slow one and was refused 503 all the same
 * (test 285 under load). Its descriptor is the fd limit's business (fd_reserve). */
static void
refuse(rs_http_conn *c)
{
    c->state = CONN_BUSY;
    c->keep_alive = false;
    c->refused = true;
    c->http->n_refused++;
}

/* Connections that count toward max_connections. */
static unsigned
held(const rs_http *h)
{
    return h->n_conns - h->n_refused;
}

/* At max_connections: closes the connection that has waited longest without a request in
 * progress (idle keep-alive) or with one still arriving (a slow client), so that a crowd of slow
 * clients cannot shut everyone else out. Returns whether one was closed. */
static bool
evict_one(rs_http *h, rs_http_conn *except)
{
    rs_http_conn *c, *oldest = NULL;

    for (c = h->conns; c; c = c->next)
        if (c != except && (c->state == CONN_IDLE || c->state == CONN_READING))
            oldest = c; /* the list is newest first */
    if (!oldest)
        return false;
    RS_COUNT(h->counters, http_evicted);
    conn_close(oldest);
    return true;
}

static void
on_connection(uv_stream_t *server, int status)
{
    rs_http *h = server->data;
    rs_http_conn *c;

    if (status < 0) {
        /* Out of descriptors (EMFILE, ENFILE) or memory: libuv accepts and drops the connection
         * waiting (its EMFILE trick), we say so and keep serving the connections we have. */
        RS_COUNT(h->counters, http_accept_errors);
        rs_log_limited(10, RS_LOG_WARN, "RS-HTTP-ACCEPT",
                       "cannot accept an HTTP connection: %s (%u open; raise the open-files "
                       "limit, or lower http-max-connections / agent-max-connections)",
                       uv_strerror(status), h->n_conns);
        return;
    }
    c = calloc(1, sizeof *c);
    if (!c)
        return;
    c->http = h;
    rs_http_parser_init(&c->parser, h->opts.max_header_bytes, h->opts.max_body_bytes);
    c->parser.bodies_total = &h->bodies_total;
    c->parser.bodies_max = h->opts.max_body_total_bytes ? h->opts.max_body_total_bytes : SIZE_MAX;
    uv_tcp_init(h->loop, &c->tcp);
    uv_timer_init(h->loop, &c->timer);
    c->tcp.data = c->timer.data = c;
    c->handles_open = 2;
    c->next = h->conns;
    if (h->conns)
        h->conns->prev = c;
    h->conns = c;
    h->n_conns++;
    RS_COUNT(h->counters, http_connections_now);
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
        conn_close(c);
        return;
    }
    /* An HTTPS connection refused here is closed without an answer: it had no handshake. */
    uv_os_fd_t fd = -1;
    uv_fileno((uv_handle_t *)&c->tcp, &fd);
    if (h->opts.fd_limit && (unsigned long)fd + fd_reserve(h->opts.fd_limit) >= h->opts.fd_limit) {
        RS_COUNT(h->counters, http_accept_errors);
        rs_log_limited(10, RS_LOG_WARN, "RS-HTTP-ACCEPT",
                       "out of file descriptors: refused an HTTP connection (descriptor %d of "
                       "%lu; %u HTTP connections open): raise the open-files limit, or lower "
                       "http-max-connections / agent-max-connections",
                       (int)fd, h->opts.fd_limit, h->n_conns);
        if (h->tls) {
            conn_close(c);
            return;
        }
        refuse(c);
        rs_http_retry_after(c, 1);
        rs_http_respond_error(c, 503, "the server is out of file descriptors");
        return;
    }
    struct sockaddr_storage peer;
    int plen = sizeof peer;
    c->peer_key = uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&peer, &plen) == 0
                      ? rs_peer_key((struct sockaddr *)&peer)
                      : 1;
    if (!(c->peer_counted = rs_peer_counts_take(h->peers, c->peer_key))) {
        RS_COUNT(h->counters, http_refused_peer);
        rs_log_limited(10, RS_LOG_WARN, "RS-HTTP-PEER-LIMIT",
                       "refused an HTTP connection: its address has %u open already "
                       "(http-max-connections-per-peer)",
                       h->opts.max_connections_per_peer);
        if (h->tls) {
            conn_close(c);
            return;
        }
        refuse(c);
        rs_http_retry_after(c, 1);
        rs_http_respond_error(c, 429, "too many connections from your address (limit %u)",
                              h->opts.max_connections_per_peer);
        return;
    }
    if (held(h) > h->opts.max_connections)
        evict_one(h, c); /* the oldest idle or slow one makes room */
    if (h->tls && rs_tls_stream_new(h->tls, &c->tls) != 0) {
        conn_close(c);
        return;
    }
    if (c->tls)
        peer_name(c, c->peer, sizeof c->peer);
    if (held(h) > h->opts.max_connections && c->tls) {
        conn_close(c); /* no handshake for a connection over the limit: it cannot be answered */
        return;
    }
    if (held(h) > h->opts.max_connections) {
        refuse(c);
        rs_http_respond_error(c, 503, "too many connections (limit %u)", h->opts.max_connections);
        return;
    }
    /* a TLS handshake gets the time of a request, not of an idle keep-alive connection */
    arm_timer(c, c->tls ? h->opts.request_timeout_ms : h->opts.idle_timeout_ms);
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

static void
free_on_close(uv_handle_t *handle)
{
    rs_http *h = handle->data;
    rs_peer_counts_free(h->peers);
    free(h);
}

int
rs_http_start(uv_loop_t *loop, const struct rs_http_options *opts, rs_http_handler handler,
              void *arg, struct rs_counters *counters, rs_http **out)
{
    struct sockaddr_storage addr;
    int namelen = sizeof addr, rc;
    rs_http *h = calloc(1, sizeof *h);

    if (!h)
        return -ENOMEM;
    h->loop = loop;
    h->opts = *opts;
    h->handler = handler;
    h->arg = arg;
    h->counters = counters;
    if ((rc = rs_peer_counts_new(opts->max_connections_per_peer, &h->peers)) != 0)
        goto fail;
    if ((rc = uv_ip4_addr(opts->host, opts->port, (struct sockaddr_in *)&addr)) != 0 &&
        (rc = uv_ip6_addr(opts->host, opts->port, (struct sockaddr_in6 *)&addr)) != 0)
        goto fail;
    uv_tcp_init(loop, &h->listener);
    h->listener.data = h;
    if ((rc = uv_tcp_bind(&h->listener, (struct sockaddr *)&addr, 0)) != 0 ||
        (rc = uv_listen((uv_stream_t *)&h->listener, 128, on_connection)) != 0) {
        uv_close((uv_handle_t *)&h->listener, free_on_close); /* freed when the loop runs */
        return rc;
    }
    uv_tcp_getsockname(&h->listener, (struct sockaddr *)&addr, &namelen);
    h->port = ntohs(addr.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&addr)->sin6_port
                                               : ((struct sockaddr_in *)&addr)->sin_port);
    *out = h;
    return 0;
fail:
    rs_peer_counts_free(h->peers);
    free(h);
    *out = NULL;
    return rc;
}

int
rs_http_port(const rs_http *h)
{
    return h->port;
}

void
rs_http_close(rs_http *h)
{
    if (!h || h->closed)
        return;
    h->closed = true;
    rs_tls_conf_release(h->tls);
    h->tls = NULL;
    uv_close((uv_handle_t *)&h->listener, NULL);
    while (h->conns)
        conn_close(h->conns);
}

void
rs_http_free(rs_http *h)
{
    if (h)
        rs_peer_counts_free(h->peers);
    free(h);
}

uint64_t
rs_http_response_bytes(const rs_http_conn *c)
{
    return c->http->response_bytes;
}
