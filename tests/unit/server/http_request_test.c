/* Unit tests of the HTTP request parser: complete requests, byte-at-a-time input, pipelining,
 * limits (413, 414, 431), malformed input (400), percent-decoding. */
#include "server/http_request.h"
#include "tests/t.h"

#include <stdio.h>
#include <string.h>

static int
feed_all(struct rs_http_parser *p, const char *s, size_t *used)
{
    return rs_http_parser_feed(p, s, strlen(s), used);
}

/* Feeds req one byte at a time until the request is complete (or an error). */
static int
feed_bytewise(struct rs_http_parser *p, const char *req, size_t len, size_t *used)
{
    int rc = RS_HTTP_NEED_MORE;

    for (size_t i = 0; i < len && rc == RS_HTTP_NEED_MORE; i++)
        rc = rs_http_parser_feed(p, req + i, 1, used);
    return rc;
}

static void
simple_and_split(void)
{
    static const char req[] = "GET /v1/jobs/a%2Bb/ranks?limit=5 HTTP/1.1\r\nHost: x\r\n\r\n";
    struct rs_http_parser p;
    struct rs_http_request r;
    size_t used = 0;
    int rc;

    rs_http_parser_init(&p, 16384, 1024);
    rc = feed_bytewise(&p, req, sizeof req - 1, &used); /* one byte at a time */
    T_EQ(rc, RS_HTTP_COMPLETE);
    T_EQ(rs_http_parser_request(&p, &r), 0);
    T_CHECK(strcmp(r.method, "GET") == 0);
    T_CHECK(strcmp(r.path, "/v1/jobs/a+b/ranks") == 0);
    T_CHECK(strcmp(r.query, "limit=5") == 0);
    T_CHECK(rs_http_parser_keep_alive(&p));
    rs_http_parser_fini(&p);
}

static void
pipelined_with_body(void)
{
    static const char two[] = "POST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"
                              "GET /b HTTP/1.0\r\n\r\n";
    struct rs_http_parser p;
    struct rs_http_request r;
    size_t used = 0, used2 = 0;

    rs_http_parser_init(&p, 16384, 1024);
    T_EQ(feed_all(&p, two, &used), RS_HTTP_COMPLETE);
    T_EQ(rs_http_parser_request(&p, &r), 0);
    T_EQ(r.body_len, 3);
    T_CHECK(strcmp(r.body, "abc") == 0);
    T_CHECK(used < strlen(two));
    rs_http_parser_next(&p);
    T_EQ(rs_http_parser_feed(&p, two + used, strlen(two) - used, &used2), RS_HTTP_COMPLETE);
    T_EQ(rs_http_parser_request(&p, &r), 0);
    T_CHECK(strcmp(r.path, "/b") == 0);
    T_EQ(r.body_len, 0);
    T_CHECK(!rs_http_parser_keep_alive(&p)); /* HTTP/1.0 without keep-alive */
    rs_http_parser_fini(&p);
}

static void
limits(void)
{
    struct rs_http_parser p;
    char big[20000];
    size_t used;

    memset(big, 'a', sizeof big);
    memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
    big[sizeof big - 1] = '\0';
    rs_http_parser_init(&p, 4096, 1024);
    T_EQ(feed_all(&p, big, &used), 431);
    rs_http_parser_fini(&p);

    memcpy(big, "GET /", 5);
    memset(big + 5, 'b', 10000);
    strcpy(big + 10005, " HTTP/1.1\r\n\r\n");
    rs_http_parser_init(&p, 1 << 20, 1024);
    T_EQ(feed_all(&p, big, &used), 414);
    rs_http_parser_fini(&p);

    rs_http_parser_init(&p, 4096, 10);
    T_EQ(feed_all(&p, "POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\n0123456789x", &used), 413);
    rs_http_parser_fini(&p);
}

static void
malformed(void)
{
    struct rs_http_parser p;
    struct rs_http_request r;
    size_t used;

    rs_http_parser_init(&p, 4096, 10);
    T_EQ(feed_all(&p, "\x01\x02 garbage\r\n\r\n", &used), 400);
    T_CHECK(strlen(rs_http_parser_error(&p)) > 0);
    rs_http_parser_fini(&p);
    rs_http_parser_init(&p, 4096, 10);
    T_EQ(feed_all(&p, "GET /a%zz HTTP/1.1\r\n\r\n", &used), RS_HTTP_COMPLETE);
    T_EQ(rs_http_parser_request(&p, &r), 400);
    rs_http_parser_fini(&p);
    rs_http_parser_init(&p, 4096, 10);
    T_EQ(feed_all(&p, "GET /a%00 HTTP/1.1\r\n\r\n", &used), RS_HTTP_COMPLETE);
    T_EQ(rs_http_parser_request(&p, &r), 400);
    rs_http_parser_fini(&p);
}

static void
if_none_match_header(void)
{
    static const char req[] =
        "GET /v1/jobs HTTP/1.1\r\nHost: x\r\nIF-None-MATCH: \"abc\"\r\nAccept: */*\r\n\r\n";
    struct rs_http_parser p;
    struct rs_http_request r;
    size_t used = 0;
    int rc;

    rs_http_parser_init(&p, 4096, 16);
    rc = feed_bytewise(&p, req, sizeof req - 1, &used); /* split everywhere */
    T_EQ(rc, RS_HTTP_COMPLETE);
    T_EQ(rs_http_parser_request(&p, &r), 0);
    T_CHECK(strcmp(r.if_none_match, "\"abc\"") == 0);
    rs_http_parser_next(&p);
    T_EQ(feed_all(&p, "GET / HTTP/1.1\r\n\r\n", &used), RS_HTTP_COMPLETE);
    T_EQ(rs_http_parser_request(&p, &r), 0);
    T_CHECK(r.if_none_match[0] == '\0'); /* not carried over to the next request */
    rs_http_parser_fini(&p);
}

/* The status rs_http_parser_request gives the request line `line`. */
static int
request_status(const char *line)
{
    char req[512];
    struct rs_http_parser p;
    struct rs_http_request r;
    size_t used = 0;
    int rc;

    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", line);
    rs_http_parser_init(&p, 16384, 1024);
    rc = feed_all(&p, req, &used);
    if (rc == RS_HTTP_COMPLETE)
        rc = rs_http_parser_request(&p, &r);
    rs_http_parser_fini(&p);
    return rc;
}

/* URLs a route must never see: an escaped '/' (it would become a separator after decoding),
 * bytes that are not UTF-8 (they reached JSON and became a 500), escaped NULs. */
static void
url_hygiene(void)
{
    T_EQ(request_status("/v1/jobs/a%2Fb/ranks"), 400);
    T_EQ(request_status("/v1/jobs/a%2fb/ranks"), 400);
    T_EQ(request_status("/v1/jobs/%ff/ranks"), 400);
    T_EQ(request_status("/v1/jobs/%c3%28/ranks"), 400);
    T_EQ(request_status("/v1/jobs/x/top?rank=%ff"), 400);
    T_EQ(request_status("/v1/jobs/x/top?rank=%00"), 400);
    T_EQ(request_status("/v1/jobs/x/top?rank=%zz"), 400);
    T_EQ(request_status("/v1/jobs/caf%c3%a9/ranks"), 0);      /* UTF-8 is fine */
    T_EQ(request_status("/v1/jobs/x/compare?with=a%2Fb"), 0); /* '/' in a query value is data */
}

/* Expect: 100-continue: due once the headers are in, not when the body came with them; a body
 * over the limit is refused on its Content-Length, before the client sends it. */
static void
expect_continue(void)
{
    static const char head[] = "POST /v1/import HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue\r\n"
                               "Content-Length: 3\r\n\r\n";
    static const char big[] = "POST /v1/import HTTP/1.1\r\nExpect: 100-continue\r\n"
                              "Content-Length: 5000\r\n\r\n";
    struct rs_http_parser p;
    size_t used = 0;

    rs_http_parser_init(&p, 16384, 1024);
    T_EQ(feed_all(&p, head, &used), RS_HTTP_NEED_MORE);
    T_CHECK(p.continue_due);
    p.continue_due = false; /* the caller answered it */
    T_EQ(feed_all(&p, "abc", &used), RS_HTTP_COMPLETE);
    T_CHECK(!p.continue_due);
    T_CHECK(p.body && p.body_len == 3);
    rs_http_parser_next(&p); /* an idle keep-alive connection holds no body */
    T_CHECK(p.body == NULL && p.body_cap == 0);
    rs_http_parser_fini(&p);
    rs_http_parser_init(&p, 16384, 1024);
    T_EQ(feed_all(&p, big, &used), 413);
    T_CHECK(!p.continue_due);
    rs_http_parser_fini(&p);
    rs_http_parser_init(&p, 16384, 1024);
    T_EQ(feed_all(&p, "POST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\n", &used), RS_HTTP_NEED_MORE);
    T_CHECK(!p.continue_due); /* not asked for */
    rs_http_parser_fini(&p);
}

/* The headers browser rules read arrive in the request, and are not carried to the next. */
static void
browser_headers(void)
{
    static const char req[] = "POST /v1/import HTTP/1.1\r\nHost: 127.0.0.1:7070\r\n"
                              "Origin: http://evil.example\r\nContent-Type: text/plain\r\n"
                              "Content-Length: 1\r\n\r\nx"
                              "GET /healthz HTTP/1.1\r\n\r\n";
    struct rs_http_parser p;
    struct rs_http_request r;
    size_t used = 0;

    rs_http_parser_init(&p, 16384, 1024);
    T_EQ(feed_all(&p, req, &used), RS_HTTP_COMPLETE);
    T_OK(rs_http_parser_request(&p, &r));
    T_CHECK(strcmp(r.host, "127.0.0.1:7070") == 0);
    T_CHECK(strcmp(r.origin, "http://evil.example") == 0);
    T_CHECK(strcmp(r.content_type, "text/plain") == 0);
    rs_http_parser_next(&p);
    T_EQ(rs_http_parser_feed(&p, req + used, sizeof req - 1 - used, &used), RS_HTTP_COMPLETE);
    T_OK(rs_http_parser_request(&p, &r));
    T_CHECK(r.host[0] == '\0' && r.origin[0] == '\0' && r.content_type[0] == '\0');
    rs_http_parser_fini(&p);
}

/* Accept-Encoding: gzip accepted only where RFC 9110's weights say so; malformed: not accepted. */
static void
accept_encoding(void)
{
    static const char req[] = "GET /a HTTP/1.1\r\nAccept-Encoding: gzip, deflate, br\r\n\r\n";
    struct rs_http_parser p;
    struct rs_http_request r;
    size_t used = 0;

    rs_http_parser_init(&p, 16384, 1024);
    T_EQ(feed_all(&p, req, &used), RS_HTTP_COMPLETE);
    T_OK(rs_http_parser_request(&p, &r));
    T_CHECK(strcmp(r.accept_encoding, "gzip, deflate, br") == 0);
    rs_http_parser_fini(&p);

    T_CHECK(rs_http_accepts_gzip("gzip"));
    T_CHECK(rs_http_accepts_gzip("GZIP"));
    T_CHECK(rs_http_accepts_gzip("deflate, gzip;q=0.5"));
    T_CHECK(rs_http_accepts_gzip("br ,  x-gzip ; q=1.000"));
    T_CHECK(rs_http_accepts_gzip("*"));
    T_CHECK(rs_http_accepts_gzip("gzip;q=0.001"));
    T_CHECK(!rs_http_accepts_gzip(""));
    T_CHECK(!rs_http_accepts_gzip("identity"));
    T_CHECK(!rs_http_accepts_gzip("br, deflate"));
    T_CHECK(!rs_http_accepts_gzip("gzip;q=0"));
    T_CHECK(!rs_http_accepts_gzip("gzip; q=0.000, *"));      /* listed and refused: * does not undo */
    T_CHECK(!rs_http_accepts_gzip("*;q=0"));
    T_CHECK(!rs_http_accepts_gzip("gzipx"));
    T_CHECK(!rs_http_accepts_gzip("gzip;q="));              /* malformed */
    T_CHECK(!rs_http_accepts_gzip("gzip;level=9"));         /* not a weight */
    T_CHECK(!rs_http_accepts_gzip("gzip;q=0.5x"));
    T_CHECK(!rs_http_accepts_gzip("gzip;q=2"));
}

/* The target is allocated as it arrives and freed with the answer: a long one in 1-byte pieces
 * grows past the first allocation and reads back whole; the next request starts with none held
 * (an idle keep-alive connection keeps no URL buffer); the bound is still 414. */
static void
url_on_demand(void)
{
    char req[6000];
    struct rs_http_parser p;
    struct rs_http_request r;
    size_t used = 0;

    memcpy(req, "GET /", 5);
    memset(req + 5, 'a', 4000);
    snprintf(req + 4005, sizeof req - 4005, "?x=1 HTTP/1.1\r\nHost: h\r\n\r\n");
    rs_http_parser_init(&p, 16384, 1024);
    T_CHECK(p.url == NULL);
    T_EQ(feed_bytewise(&p, req, strlen(req), &used), RS_HTTP_COMPLETE);
    T_EQ(rs_http_parser_request(&p, &r), 0);
    T_EQ(strlen(r.path), 4001);
    T_CHECK(r.path[4000] == 'a' && strcmp(r.query, "x=1") == 0);
    T_CHECK(p.url_cap >= 4006 && p.url_cap <= RS_HTTP_URL_MAX);
    rs_http_parser_next(&p);
    T_CHECK(p.url == NULL && p.url_cap == 0); /* idle: nothing held */
    T_EQ(feed_all(&p, "GET /b HTTP/1.1\r\n\r\n", &used), RS_HTTP_COMPLETE);
    T_EQ(rs_http_parser_request(&p, &r), 0);
    T_CHECK(strcmp(r.path, "/b") == 0 && p.url_cap == 256);
    rs_http_parser_fini(&p);

    static char big[RS_HTTP_URL_MAX + 64];
    memcpy(big, "GET /", 5);
    memset(big + 5, 'b', RS_HTTP_URL_MAX);
    snprintf(big + 5 + RS_HTTP_URL_MAX, 40, " HTTP/1.1\r\n\r\n");
    rs_http_parser_init(&p, 65536, 1024);
    T_EQ(feed_all(&p, big, &used), 414);
    rs_http_parser_fini(&p);
}

int
main(void)
{
    T_RUN(if_none_match_header);
    T_RUN(simple_and_split);
    T_RUN(pipelined_with_body);
    T_RUN(limits);
    T_RUN(malformed);
    T_RUN(url_hygiene);
    T_RUN(expect_continue);
    T_RUN(browser_headers);
    T_RUN(accept_encoding);
    T_RUN(url_on_demand);
    return T_DONE("server/http_request");
}
