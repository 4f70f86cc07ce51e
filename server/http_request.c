/* Incremental, limited HTTP request parsing on llhttp (see http_request.h). */
#include "server/http_request.h"

#include "common/utf8.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static struct rs_http_parser *
parser_of(llhttp_t *l)
{
    return l->data;
}

static int
limit_headers(struct rs_http_parser *p, size_t add)
{
    p->header_bytes += add;
    if (p->header_bytes > p->max_header_bytes) {
        p->error_status = 431;
        return -1;
    }
    return 0;
}

static int
on_message_begin(llhttp_t *l)
{
    struct rs_http_parser *p = parser_of(l);

    p->in_message = true;
    p->url_len = 0;
    p->header_bytes = 0;
    p->body_len = 0;
    p->error_status = 0;
    p->header_name_len = 0;
    p->header_name[0] = '\0';
    for (int i = 0; i < RS_HTTP_HEADERS; i++) {
        p->headers[i].len = 0;
        p->headers[i].value[0] = '\0';
    }
    p->capturing = -1;
    p->continue_due = false;
    return 0;
}

static int
on_url(llhttp_t *l, const char *at, size_t len)
{
    struct rs_http_parser *p = parser_of(l);

    if (p->url_len + len >= RS_HTTP_URL_MAX) {
        p->error_status = 414;
        return -1;
    }
    if (p->url_len + len >= p->url_cap) { /* doubled from 256: most targets fit the first */
        size_t cap = p->url_cap ? p->url_cap : 256;
        while (cap <= p->url_len + len)
            cap *= 2;
        cap = cap < RS_HTTP_URL_MAX ? cap : RS_HTTP_URL_MAX;
        char *grown = realloc(p->url, cap);
        if (!grown) {
            p->error_status = 500;
            return -1;
        }
        p->url = grown;
        p->url_cap = cap;
    }
    memcpy(p->url + p->url_len, at, len);
    p->url_len += len;
    p->url[p->url_len] = '\0';
    return limit_headers(p, len);
}

static int
on_header_field(llhttp_t *l, const char *at, size_t len)
{
    struct rs_http_parser *p = parser_of(l);

    /* names may arrive in pieces; keep the first bytes, enough to recognise the ones we use */
    for (size_t i = 0; i < len && p->header_name_len + 1 < sizeof p->header_name; i++)
        p->header_name[p->header_name_len++] = (char)tolower((unsigned char)at[i]);
    p->header_name[p->header_name_len] = '\0';
    return limit_headers(p, len + 2); /* + separator, so many tiny headers count */
}

static int
on_header_field_complete(llhttp_t *l)
{
    struct rs_http_parser *p = parser_of(l);

    static const char *const names[RS_HTTP_HEADERS] = {
        "if-none-match", "expect",        "host",           "origin",
        "content-type",  "authorization", "accept-encoding"};

    p->capturing = -1;
    for (int i = 0; i < RS_HTTP_HEADERS; i++)
        if (strcmp(p->header_name, names[i]) == 0)
            p->capturing = i;
    p->header_name_len = 0;
    p->header_name[0] = '\0';
    return 0;
}

/* Appends a piece of a header value to buf (cap bytes, NUL-terminated; the rest is cut). */
static void
capture(char *buf, size_t cap, size_t *n, const char *at, size_t len)
{
    for (size_t i = 0; i < len && *n + 1 < cap; i++)
        buf[(*n)++] = at[i];
    buf[*n] = '\0';
}

static int
on_header_value(llhttp_t *l, const char *at, size_t len)
{
    struct rs_http_parser *p = parser_of(l);

    if (p->capturing >= 0) {
        struct rs_http_header *h = &p->headers[p->capturing];
        capture(h->value, sizeof h->value, &h->len, at, len);
    }
    return limit_headers(p, len + 2);
}

static int
on_headers_complete(llhttp_t *l)
{
    struct rs_http_parser *p = parser_of(l);

    if ((l->flags & F_CONTENT_LENGTH) && l->content_length > p->max_body_bytes) {
        p->error_status = 413; /* said now, not after the client sent it all */
        return -1;
    }
    p->continue_due = strcasecmp(p->headers[RS_HTTP_EXPECT].value, "100-continue") == 0;
    return 0;
}

static int
on_body(llhttp_t *l, const char *at, size_t len)
{
    struct rs_http_parser *p = parser_of(l);
    char *nb;

    if (p->body_len + len > p->max_body_bytes) {
        p->error_status = 413;
        return -1;
    }
    if (p->body_len + len + 1 > p->body_cap) { /* doubling: a body in many pieces is copied O(n) */
        size_t cap = p->body_cap ? p->body_cap : 4096;
        while (cap < p->body_len + len + 1)
            cap *= 2;
        if (p->bodies_total && *p->bodies_total - p->body_cap + cap > p->bodies_max) {
            p->error_status = 503; /* every connection's bodies together: memory is bounded */
            return -1;
        }
        if (!(nb = realloc(p->body, cap))) {
            p->error_status = 500;
            return -1;
        }
        p->body = nb;
        if (p->bodies_total)
            *p->bodies_total += cap - p->body_cap;
        p->body_cap = cap;
    }
    memcpy(p->body + p->body_len, at, len);
    p->body_len += len;
    p->body[p->body_len] = '\0';
    return 0;
}

static int
on_message_complete(llhttp_t *l)
{
    return HPE_PAUSED; /* one request at a time: the caller answers, then asks for the next */
}

void
rs_http_parser_init(struct rs_http_parser *p, size_t max_header_bytes, size_t max_body_bytes)
{
    memset(p, 0, sizeof *p);
    p->max_header_bytes = max_header_bytes;
    p->max_body_bytes = max_body_bytes;
    llhttp_settings_init(&p->settings);
    p->settings.on_message_begin = on_message_begin;
    p->settings.on_url = on_url;
    p->settings.on_header_field = on_header_field;
    p->settings.on_header_field_complete = on_header_field_complete;
    p->settings.on_header_value = on_header_value;
    p->settings.on_headers_complete = on_headers_complete;
    p->settings.on_body = on_body;
    p->settings.on_message_complete = on_message_complete;
    llhttp_init(&p->llhttp, HTTP_REQUEST, &p->settings);
    p->llhttp.data = p;
}

static void
body_free(struct rs_http_parser *p)
{
    if (p->bodies_total)
        *p->bodies_total -= p->body_cap;
    free(p->body);
    p->body = NULL;
    p->body_len = p->body_cap = 0;
}

static void
url_free(struct rs_http_parser *p)
{
    free(p->url);
    p->url = NULL;
    p->url_len = p->url_cap = 0;
}

void
rs_http_parser_fini(struct rs_http_parser *p)
{
    body_free(p);
    url_free(p);
}

int
rs_http_parser_feed(struct rs_http_parser *p, const char *data, size_t len, size_t *used)
{
    llhttp_errno_t err = llhttp_execute(&p->llhttp, data, len);

    if (err == HPE_OK)
        return RS_HTTP_NEED_MORE;
    if (err == HPE_PAUSED) {
        const char *stop = llhttp_get_error_pos(&p->llhttp);
        *used = stop && stop >= data && stop <= data + len ? (size_t)(stop - data) : len;
        snprintf(p->method, sizeof p->method, "%s", llhttp_method_name(p->llhttp.method));
        return RS_HTTP_COMPLETE;
    }
    return p->error_status ? p->error_status : 400;
}

/* Percent-decodes s into out (at most out_len - 1 bytes and a NUL). Returns the length, or -1
 * for a bad escape, an escaped NUL, or (no_slash) an escaped '/'. */
static long
percent_decode(const char *s, char *out, size_t out_len, bool no_slash)
{
    size_t w = 0;

    for (const char *r = s; *r && w + 1 < out_len; r++) {
        if (*r != '%') {
            out[w++] = *r;
            continue;
        }
        int hi = rs_hex_digit(r[1]), lo = hi < 0 ? -1 : rs_hex_digit(r[2]);
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0) || (no_slash && hi == 2 && lo == 0xF))
            return -1;
        out[w++] = (char)(hi << 4 | lo);
        r += 2;
    }
    out[w] = '\0';
    return (long)w;
}

int
rs_http_parser_request(struct rs_http_parser *p, struct rs_http_request *out)
{
    char *q, decoded[RS_HTTP_URL_MAX];
    const char *query = "";
    long n;

    if (!p->url) /* llhttp refuses a request line without a target: only a misuse gets here */
        return 400;
    q = strchr(p->url, '?');

    if (q) {
        *q = '\0';
        query = q + 1;
        /* '+' is a space in a query: it cannot make bytes invalid, so only escapes are checked */
        if ((n = percent_decode(query, decoded, sizeof decoded, false)) < 0 ||
            !rs_utf8_valid(decoded, (size_t)n))
            return 400;
    }
    if ((n = percent_decode(p->url, decoded, sizeof decoded, true)) < 0 ||
        !rs_utf8_valid(decoded, (size_t)n))
        return 400;
    memcpy(p->url, decoded, (size_t)n + 1);
    *out = (struct rs_http_request){
        .method = p->method,
        .path = p->url,
        .query = query,
        .body = p->body ? p->body : "",
        .body_len = p->body_len,
        .if_none_match = p->headers[RS_HTTP_IF_NONE_MATCH].value,
        .host = p->headers[RS_HTTP_HOST].value,
        .origin = p->headers[RS_HTTP_ORIGIN].value,
        .content_type = p->headers[RS_HTTP_CONTENT_TYPE].value,
        .authorization = p->headers[RS_HTTP_AUTHORIZATION].value,
        .accept_encoding = p->headers[RS_HTTP_ACCEPT_ENCODING].value,
    };
    return 0;
}

/* The weight of one Accept-Encoding element's parameters (";q=0.5"): 0 for q=0 (or 0.0..),
 * 1 for anything else that is well formed, -1 when malformed. */
static int
coding_weight(const char *params, size_t len)
{
    size_t i = 0;

    while (i < len && (params[i] == ' ' || params[i] == '\t'))
        i++;
    if (i == len)
        return 1;
    if (params[i++] != ';')
        return -1;
    while (i < len && (params[i] == ' ' || params[i] == '\t'))
        i++;
    if (len - i < 3 || (params[i] != 'q' && params[i] != 'Q') || params[i + 1] != '=')
        return -1;
    i += 2;
    bool zero = params[i] == '0';
    if (params[i] != '0' && params[i] != '1')
        return -1;
    for (i++; i < len && params[i] != ' ' && params[i] != '\t'; i++)
        if (params[i] != '.' && !(params[i] >= '0' && params[i] <= '9'))
            return -1;
        else if (params[i] >= '1' && params[i] <= '9')
            zero = false;
    return zero ? 0 : 1;
}

bool
rs_http_accepts_gzip(const char *v)
{
    int gzip = -1, star = -1; /* their weights; -1: not listed */

    while (*v) {
        size_t len = strcspn(v, ","), name = 0;
        const char *e = v;
        while (len && (*e == ' ' || *e == '\t'))
            e++, len--;
        while (name < len && e[name] != ';' && e[name] != ' ' && e[name] != '\t')
            name++;
        int w = coding_weight(e + name, len - name);
        if (w < 0)
            return false;
        if ((name == 4 && strncasecmp(e, "gzip", 4) == 0) ||
            (name == 6 && strncasecmp(e, "x-gzip", 6) == 0))
            gzip = w;
        else if (name == 1 && e[0] == '*')
            star = w;
        v = e + len;
        if (*v == ',')
            v++;
    }
    return gzip > 0 || (gzip < 0 && star > 0);
}

bool
rs_http_parser_keep_alive(const struct rs_http_parser *p)
{
    return llhttp_should_keep_alive(&p->llhttp) != 0;
}

void
rs_http_parser_next(struct rs_http_parser *p)
{
    body_free(p);
    url_free(p);
    p->in_message = false;
    llhttp_resume(&p->llhttp);
}

const char *
rs_http_parser_error(const struct rs_http_parser *p)
{
    const char *reason = llhttp_get_error_reason(&p->llhttp);
    return reason ? reason : llhttp_errno_name(llhttp_get_errno(&p->llhttp));
}
