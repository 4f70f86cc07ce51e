/* The dashboard's files built into rankscope-server (docs/dashboard.md): generated at build time
 * by scripts/embed_assets.sh into build/gen/web_assets.c, from web/ bundled by esbuild — or, where
 * node/npm are absent, from web/fallback/ (a page that says how to build the dashboard). */
#ifndef RS_SERVER_WEB_ASSETS_H
#define RS_SERVER_WEB_ASSETS_H

#include <stddef.h>

struct rs_web_asset {
    const char *path;         /* "/index.html", "/assets/app.js" */
    const char *content_type; /* from the file's extension */
    const char *etag;         /* "\"<CRC-32>-<size>\"" of the file (POSIX cksum) */
    const unsigned char *data;
    size_t len;
    /* the file gzip-compressed (gzip -9 -n), served with Content-Encoding: gzip to clients that
     * accept it; NULL (gz_len 0) when gzip was absent at build time or gained nothing */
    const char *gz_etag; /* "\"<CRC-32>-<size>-gz\"": another representation, another ETag */
    const unsigned char *gz_data;
    size_t gz_len;
};

extern const struct rs_web_asset rs_web_assets[];
extern const unsigned rs_web_asset_count;

#endif
