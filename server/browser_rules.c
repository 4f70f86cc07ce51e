/* What a browser could be made to do to the server, refused (see server_int.h "Browser rules"). */
#include "server/server_int.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The host of "host", "host:port", "[v6]" or "[v6]:port" into out; false when the text is none of
 * these (a port that is not digits, "@", anything after "]" but a port). */
static bool
host_part(const char *hostport, char *out, size_t len)
{
    const char *end;

    if (hostport[0] == '[') {
        const char *close = strchr(hostport, ']');
        if (!close)
            return false;
        end = close + 1;
    } else
        end = hostport + strcspn(hostport, ":");
    if (*end == ':') {
        if (!end[1] || strspn(end + 1, "0123456789") != strlen(end + 1))
            return false;
    } else if (*end)
        return false;
    if ((size_t)(end - hostport) >= len || strchr(hostport, '@'))
        return false;
    snprintf(out, len, "%.*s", (int)(end - hostport), hostport);
    return true;
}

/* localhost, [::1], or an IPv4 literal in 127.0.0.0/8 — exactly, so that 127.0.0.1.evil.example
 * (a name an attacker can point anywhere) is none. */
static bool
is_loopback_name(const char *host)
{
    struct in_addr a;

    if (strcasecmp(host, "localhost") == 0 || strcmp(host, "[::1]") == 0 ||
        strcmp(host, "::1") == 0)
        return true;
    return inet_pton(AF_INET, host, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

bool
rs__server_http_loopback(const char *http_address)
{
    char host[256];

    return host_part(http_address, host, sizeof host) && is_loopback_name(host);
}

/* Origin "scheme://host[:port]" names the same host and port as the Host header. */
static bool
same_origin(const char *origin, const char *host)
{
    const char *authority = strstr(origin, "://");
    return authority && strcasecmp(authority + 3, host) == 0;
}

bool
rs__server_browser_refused(struct rs_server *srv, rs_http_conn *c,
                           const struct rs_http_request *req)
{
    char host[256];
    bool changes = strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0;

    /* DNS rebinding: a page of evil.example whose name now points at 127.0.0.1 sends
     * "Host: evil.example" — a server on loopback answers loopback names only */
    if (srv->http_loopback && req->host[0] &&
        !(host_part(req->host, host, sizeof host) && is_loopback_name(host))) {
        rs_http_respond_error(c, 403,
                              "Host '%.100s' is not this server: it listens on loopback and "
                              "answers 127.0.0.1, localhost or [::1]",
                              req->host);
        return true;
    }
    /* CSRF: a page may make a browser send a request elsewhere; one that changes data must come
     * from no page (a client) or from this origin */
    if (changes && req->origin[0] && !(req->host[0] && same_origin(req->origin, req->host))) {
        rs_http_respond_error(c, 403, "a %s from the page of %.100s is refused (cross-origin)",
                              req->method, req->origin);
        return true;
    }
    /* a form or a "simple" request can post text/plain without asking; protobuf needs a
     * preflight this server never grants */
    if (strcmp(req->path, "/v1/import") == 0 && strcmp(req->method, "POST") == 0 &&
        strncasecmp(req->content_type, "application/x-protobuf", 22) != 0) {
        rs_http_respond_error(c, 415,
                              "POST /v1/import takes Content-Type: application/x-protobuf "
                              "(an AgentBatch), not '%.60s'",
                              req->content_type);
        return true;
    }
    return false;
}
