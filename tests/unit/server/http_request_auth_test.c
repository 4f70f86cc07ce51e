/* Unit tests of the Authorization header in the HTTP request parser (server/http_request.c): it is
 * captured, reset between pipelined requests, and a value longer than the parser keeps is cut so
 * that what remains is never a valid token (a cut token cannot match a shorter one's hash). */
#include "common/auth_token.h"
#include "server/http_request.h"
#include "tests/t.h"

#include <stdio.h>
#include <string.h>

static void
captured_and_reset(void)
{
    static const char req[] = "GET /v1/jobs HTTP/1.1\r\nHost: x\r\n"
                              "authorization: Bearer rst_0123456789abcdef0123\r\n\r\n"
                              "GET /v1/jobs HTTP/1.1\r\nHost: x\r\n\r\n";
    struct rs_http_parser p;
    struct rs_http_request r;
    size_t used = 0;

    rs_http_parser_init(&p, 16384, 1024);
    T_EQ(rs_http_parser_feed(&p, req, sizeof req - 1, &used), RS_HTTP_COMPLETE);
    T_OK(rs_http_parser_request(&p, &r));
    T_CHECK(strcmp(r.authorization, "Bearer rst_0123456789abcdef0123") == 0);
    rs_http_parser_next(&p);
    size_t rest = sizeof req - 1 - used;
    T_EQ(rs_http_parser_feed(&p, req + used, rest, &used), RS_HTTP_COMPLETE);
    T_OK(rs_http_parser_request(&p, &r));
    T_CHECK(r.authorization[0] == '\0'); /* not the previous request's */
    rs_http_parser_fini(&p);
}

static void
long_value_cut_invalid(void)
{
    char req[2048], token[600];
    struct rs_http_parser p;
    struct rs_http_request r;
    size_t used = 0;

    memset(token, 'a', sizeof token - 1);
    token[sizeof token - 1] = '\0';
    snprintf(req, sizeof req, "GET / HTTP/1.1\r\nAuthorization: Bearer %s\r\n\r\n", token);
    rs_http_parser_init(&p, 16384, 1024);
    T_EQ(rs_http_parser_feed(&p, req, strlen(req), &used), RS_HTTP_COMPLETE);
    T_OK(rs_http_parser_request(&p, &r));
    T_CHECK(strlen(r.authorization) < strlen(token));
    T_CHECK(strncmp(r.authorization, "Bearer ", 7) == 0);
    T_CHECK(!rs_auth_token_valid(r.authorization + 7)); /* longer than any token */
    rs_http_parser_fini(&p);
}

int
main(void)
{
    T_RUN(captured_and_reset);
    T_RUN(long_value_cut_invalid);
    return T_DONE("server/http_request_auth");
}
