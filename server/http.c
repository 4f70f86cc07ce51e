/* HTTP/1.1 connections on libuv + llhttp, with limits and timeouts (see http.h). */
#include "server/http.h"

#include "common/log.h"

#include <llhttp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define URL_MAX 8192
#define READ_CHUNK 65536

enum conn_state { CONN_IDLE, CONN_READING, CONN_BUSY, CONN_WRITING, CONN_DRAINING };

struct rs_http_conn {
    uv_tcp_t tcp;
    uv_timer_t timer;
    uv_shutdown_t shutdown;
    llhttp_t parser;
    rs_http *http;
    struct rs_http_conn *prev, *next;
    enum conn_state state;
    int handles_open; /* tcp + timer; freed when both closed and not busy */
    bool closing;     /* close after the current write, or now */
    bool keep_alive;
    int error_status; /* set by a parser callback that hit a limit */
    char url[URL_MAX];
    size_t url_len;
    size_t header_bytes;
    char *body;
    size_t body_len;
    char method[16];
    char *pending; /* bytes received after a complete request (pipelining) */
    size_t pending_len;
    char read_buf[READ_CHUNK];
};

struct rs_http {
    uv_loop_t *loop;
    uv_tcp_t listener;
    struct rs_http_options opts;
    rs_http_handler handler;
    void *arg;
    struct rs_counters *counters;
    rs_http_conn *conns;
    unsigned n_conns;
    int port;
    bool closed;
    llhttp_settings_t settings;
};

static void feed(rs_http_conn *c, const char *data, size_t len);
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

static const char *
reason_phrase(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
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
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    default:
        return "Unknown";
    }
}

/* ---- connection lifetime ----------------------------------------------------------------------
 */

static void
conn_free_if_done(rs_http_conn *c)
{
    if (c->handles_open > 0 || c->state == CONN_BUSY)
        return;
    free(c->body);
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
    RS_COUNT_SUB(h->counters, http_connections_now, 1);
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
    c->shutdown.data = c;
    if (uv_shutdown(&c->shutdown, (uv_stream_t *)&c->tcp, on_shutdown) != 0)
        conn_close(c);
}

static void
on_written(uv_write_t *req, int status)
{
    struct write_req *w = (struct write_req *)req;
    rs_http_conn *c = w->conn;

    free(w);
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
    llhttp_resume(&c->parser);
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

void
rs_http_respond(rs_http_conn *c, int status, const char *content_type, const char *body, size_t len)
{
    char head[512];
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
    n = snprintf(head, sizeof head,
                 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                 "Cache-Control: no-store\r\nConnection: %s\r\n\r\n",
                 status, reason_phrase(status), content_type, len,
                 c->keep_alive ? "keep-alive" : "close");
    w = malloc(sizeof *w + (size_t)n + len);
    if (!w) {
        conn_close(c);
        return;
    }
    w->conn = c;
    memcpy(w->data, head, (size_t)n);
    memcpy(w->data + n, body, len);
    buf = uv_buf_init(w->data, (unsigned)((size_t)n + len));
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &buf, 1, on_written) != 0) {
        free(w);
        conn_close(c);
    }
}

void
rs_http_respond_json(rs_http_conn *c, int status, json_t *doc)
{
    static const char oom[] = "{\"error\":{\"status\":500,\"message\":\"out of memory\"}}";
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(9)) : NULL;

    json_decref(doc);
    if (!text) {
        rs_http_respond(c, 500, "application/json", oom, sizeof oom - 1);
        return;
    }
    rs_http_respond(c, status, "application/json", text, strlen(text));
    free(text);
}

void
rs_http_respond_error(rs_http_conn *c, int status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    rs_http_respond_json(c, status,
                         json_pack("{s:{s:i, s:s}}", "error", "status", status, "message", msg));
}

/* ---- parsing -------------------------------------------------------------------------------- */

static rs_http_conn *
conn_of(llhttp_t *p)
{
    return p->data;
}

static int
limit_headers(rs_http_conn *c, size_t add)
{
    c->header_bytes += add;
    if (c->header_bytes > c->http->opts.max_header_bytes) {
        c->error_status = 431;
        return -1;
    }
    return 0;
}

static int
on_message_begin(llhttp_t *p)
{
    rs_http_conn *c = conn_of(p);

    c->url_len = 0;
    c->header_bytes = 0;
    c->body_len = 0;
    c->error_status = 0;
    c->state = CONN_READING;
    arm_timer(c, c->http->opts.request_timeout_ms);
    return 0;
}

static int
on_url(llhttp_t *p, const char *at, size_t len)
{
    rs_http_conn *c = conn_of(p);

    if (c->url_len + len >= sizeof c->url) {
        c->error_status = 414;
        return -1;
    }
    memcpy(c->url + c->url_len, at, len);
    c->url_len += len;
    c->url[c->url_len] = '\0';
    return limit_headers(c, len);
}

static int
on_header_part(llhttp_t *p, const char *at, size_t len)
{
    return limit_headers(conn_of(p), len + 2); /* + separator, so many tiny headers count */
}

static int
on_body(llhttp_t *p, const char *at, size_t len)
{
    rs_http_conn *c = conn_of(p);
    char *nb;

    if (c->body_len + len > c->http->opts.max_body_bytes) {
        c->error_status = 413;
        return -1;
    }
    if (!(nb = realloc(c->body, c->body_len + len + 1))) {
        c->error_status = 500;
        return -1;
    }
    c->body = nb;
    memcpy(c->body + c->body_len, at, len);
    c->body_len += len;
    c->body[c->body_len] = '\0';
    return 0;
}

static int
on_message_complete(llhttp_t *p)
{
    return HPE_PAUSED; /* one request at a time: resume after the response is written */
}

static int
hex_value(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* Percent-decodes the path part of c->url in place; returns the query string. NULL when the
 * path has a bad escape or decodes to a NUL byte. */
static const char *
split_url(rs_http_conn *c)
{
    char *q = strchr(c->url, '?'), *r, *w;
    const char *query = "";

    if (q) {
        *q = '\0';
        query = q + 1;
    }
    for (r = w = c->url; *r; r++, w++) {
        if (*r != '%') {
            *w = *r;
            continue;
        }
        int hi = hex_value(r[1]), lo = hi < 0 ? -1 : hex_value(r[2]);
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
            return NULL;
        *w = (char)(hi << 4 | lo);
        r += 2;
    }
    *w = '\0';
    return query;
}

static void
dispatch(rs_http_conn *c)
{
    struct rs_http_request req;
    const char *query;

    uv_timer_stop(&c->timer);
    c->keep_alive = llhttp_should_keep_alive(&c->parser);
    snprintf(c->method, sizeof c->method, "%s", llhttp_method_name(c->parser.method));
    c->state = CONN_BUSY;
    if (!(query = split_url(c))) {
        rs_http_respond_error(c, 400, "malformed percent-escape in the path");
        return;
    }
    req = (struct rs_http_request){c->method, c->url, query, c->body ? c->body : "", c->body_len};
    c->http->handler(c->http->arg, c, &req);
}

static void
feed(rs_http_conn *c, const char *data, size_t len)
{
    llhttp_errno_t err = llhttp_execute(&c->parser, data, len);

    if (err == HPE_OK)
        return;
    if (err == HPE_PAUSED) {
        const char *stop = llhttp_get_error_pos(&c->parser);
        size_t used = stop && stop >= data && stop <= data + len ? (size_t)(stop - data) : len;
        uv_read_stop((uv_stream_t *)&c->tcp);
        if (used < len) {
            c->pending = malloc(len - used);
            if (c->pending) {
                memcpy(c->pending, data + used, len - used);
                c->pending_len = len - used;
            }
        }
        dispatch(c);
        return;
    }
    /* A protocol error or a limit: answer it and close the connection. */
    uv_read_stop((uv_stream_t *)&c->tcp);
    c->keep_alive = false;
    c->state = CONN_BUSY;
    int status = c->error_status ? c->error_status : 400;
    if (status == 400)
        rs_http_respond_error(c, 400, "malformed HTTP request: %s",
                              llhttp_get_error_reason(&c->parser) ?: llhttp_errno_name(err));
    else if (status == 431)
        rs_http_respond_error(c, 431, "request line and headers exceed %zu bytes",
                              c->http->opts.max_header_bytes);
    else if (status == 413)
        rs_http_respond_error(c, 413, "request body exceeds %zu bytes",
                              c->http->opts.max_body_bytes);
    else if (status == 414)
        rs_http_respond_error(c, 414, "request target exceeds %d bytes", URL_MAX - 1);
    else
        rs_http_respond_error(c, status, "request failed");
}

/* ---- accepting ------------------------------------------------------------------------------- */

static void
on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    rs_http_conn *c = h->data;
    *buf = uv_buf_init(c->read_buf, sizeof c->read_buf);
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
    if (nread > 0 && c->state != CONN_BUSY && c->state != CONN_WRITING)
        feed(c, buf->base, (size_t)nread);
}

static void
on_connection(uv_stream_t *server, int status)
{
    rs_http *h = server->data;
    rs_http_conn *c;

    if (status < 0)
        return;
    c = calloc(1, sizeof *c);
    if (!c)
        return;
    c->http = h;
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
    llhttp_init(&c->parser, HTTP_REQUEST, &h->settings);
    c->parser.data = c;
    if (h->n_conns > h->opts.max_connections) {
        c->state = CONN_BUSY;
        c->keep_alive = false;
        rs_http_respond_error(c, 503, "too many connections (limit %u)", h->opts.max_connections);
        return;
    }
    arm_timer(c, h->opts.idle_timeout_ms);
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

static void
free_on_close(uv_handle_t *handle)
{
    free(handle->data);
}

int
rs_http_start(uv_loop_t *loop, const struct rs_http_options *opts, rs_http_handler handler,
              void *arg, struct rs_counters *counters, rs_http **out)
{
    struct sockaddr_storage addr;
    int namelen = sizeof addr, rc;
    rs_http *h = calloc(1, sizeof *h);

    if (!h)
        return -12;
    h->loop = loop;
    h->opts = *opts;
    h->handler = handler;
    h->arg = arg;
    h->counters = counters;
    llhttp_settings_init(&h->settings);
    h->settings.on_message_begin = on_message_begin;
    h->settings.on_url = on_url;
    h->settings.on_header_field = on_header_part;
    h->settings.on_header_value = on_header_part;
    h->settings.on_body = on_body;
    h->settings.on_message_complete = on_message_complete;
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
    uv_close((uv_handle_t *)&h->listener, NULL);
    while (h->conns)
        conn_close(h->conns);
}

void
rs_http_free(rs_http *h)
{
    free(h);
}
