/* The dashboard's files (server/web_assets.h) on the REST port: GET / and /index.html answer the
 * page, /assets/<file> its scripts and styles; with ETag revalidation and headers that keep a
 * browser from running anything the page did not bring (Content-Security-Policy without inline
 * script, nosniff, no framing), gzip-compressed at build time for browsers that accept it. The
 * page itself calls the REST API (docs/dashboard.md). */
#include "server/server_int.h"
#include "server/web_assets.h"

#include <string.h>

/* What the page may load: its own scripts, styles and API only; nothing inline, nothing framed. */
#define DASHBOARD_HEADERS                                                                          \
    "Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self'; "           \
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "               \
    "form-action 'self'; frame-ancestors 'none'\r\n"                                               \
    "X-Content-Type-Options: nosniff\r\n"                                                          \
    "X-Frame-Options: DENY\r\n"                                                                    \
    "Referrer-Policy: no-referrer\r\n"                                                              \
    "Vary: Accept-Encoding\r\n"

static const struct rs_web_asset *
asset_of(const char *path)
{
    if (strcmp(path, "/") == 0)
        path = "/index.html";
    for (unsigned i = 0; i < rs_web_asset_count; i++)
        if (strcmp(rs_web_assets[i].path, path) == 0)
            return &rs_web_assets[i];
    return NULL;
}

bool
rs__server_dashboard_path(const char *path)
{
    return strcmp(path, "/") == 0 || strcmp(path, "/index.html") == 0 ||
           strncmp(path, "/assets/", 8) == 0;
}

bool
rs__server_dashboard(rs_http_conn *c, const struct rs_http_request *req)
{
    const char *path = req->path;
    const struct rs_web_asset *a;

    if (!rs__server_dashboard_path(path))
        return false;
    if (strcmp(req->method, "GET") != 0) {
        rs_http_respond_error(c, 405, "%s is not allowed on %s (use GET)", req->method, path);
        return true;
    }
    if (!(a = asset_of(path))) {
        rs_http_respond_error(c, 404, "no dashboard file %s", path);
        return true;
    }
    if (a->gz_len && rs_http_accepts_gzip(req->accept_encoding))
        rs_http_respond_static(c, a->content_type, a->gz_etag,
                               DASHBOARD_HEADERS "Content-Encoding: gzip\r\n", a->gz_data,
                               a->gz_len);
    else
        rs_http_respond_static(c, a->content_type, a->etag, DASHBOARD_HEADERS, a->data, a->len);
    return true;
}
