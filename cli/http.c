/* libcurl request + jansson parse for the CLI (see http.h). */
#include "cli/http.h"

#include "common/array.h"
#include "common/auth_token.h"
#include "common/utf8.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RESPONSE (256u << 20)

static char auth_header[RS_AUTH_TOKEN_MAX + 32]; /* "Authorization: Bearer ...", "" = none */

void
rs_cli_http_set_token(const char *token)
{
    if (token && token[0])
        snprintf(auth_header, sizeof auth_header, "Authorization: Bearer %s", token);
    else
        auth_header[0] = '\0';
}
static const char *ca_file; /* rs_cli_http_set_ca_file */

struct body {
    char *data;
    size_t len, cap;
};

static size_t
on_data(char *ptr, size_t size, size_t n, void *arg)
{
    struct body *b = arg;
    size_t add = size * n;

    if (b->len + add > MAX_RESPONSE || RS_ARRAY_RESERVE(b->data, b->cap, b->len, add + 1) != 0)
        return 0; /* aborts the transfer */
    memcpy(b->data + b->len, ptr, add);
    b->len += add;
    b->data[b->len] = '\0';
    return add;
}

void
rs_cli_http_set_ca_file(const char *path)
{
    ca_file = path && path[0] ? path : NULL;
}

/* The message for a failed transfer: certificate problems say what to do about them. */
static void
transfer_error(CURLcode cc, const char *detail, const char *base_url, char *err, size_t err_len)
{
    char why[4 * CURL_ERROR_SIZE];

    /* curl's words may quote the server's certificate (its subject): bytes from the network */
    detail = detail[0] ? detail : curl_easy_strerror(cc);
    rs_utf8_escape(detail, strlen(detail), why, sizeof why);

    if (cc == CURLE_PEER_FAILED_VERIFICATION || cc == CURLE_SSL_CACERT_BADFILE)
        snprintf(err, err_len,
                 "cannot trust rankscope-server at %s: %s (give the CA that signed its "
                 "certificate: --ca-file FILE or RANKSCOPE_CLI_CA_FILE; and a URL with a name "
                 "the certificate carries)",
                 base_url, why);
    else if (cc == CURLE_SSL_CONNECT_ERROR)
        snprintf(err, err_len, "no TLS session with rankscope-server at %s: %s (is it https?)",
                 base_url, why);
    else
        snprintf(err, err_len,
                 "cannot reach rankscope-server at %s: %s (start it, or pass --server URL)",
                 base_url, why);
}

int
rs_cli_http(const char *method, const char *base_url, const char *path, long *status, json_t **doc,
            char *err, size_t err_len)
{
    return rs_cli_http_body(method, base_url, path, NULL, NULL, 0, status, doc, err, err_len);
}

/* One request; the answer's bytes go to *b (caller frees b->data). Returns 0 or -1 (err). */
static int
perform(const char *method, const char *base_url, const char *path, const char *content_type,
        const void *body, size_t len, long *status, struct body *b, char *err, size_t err_len)
{
    struct curl_slist *headers = NULL;
    char url[4096], detail[CURL_ERROR_SIZE] = "";
    CURL *curl;
    CURLcode cc;
    int rc = -1;

    snprintf(url, sizeof url, "%s%s", base_url, path);
    if (!(curl = curl_easy_init())) {
        snprintf(err, err_len, "cannot initialise libcurl");
        return -1;
    }
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 60000L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https"); /* not file://, ftp://, ... */
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, detail);
    if (ca_file)
        curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file);
    if (body) {
        char header[128];
        struct curl_slist *more;
        snprintf(header, sizeof header, "Content-Type: %s", content_type);
        if (!(more = curl_slist_append(headers, header))) {
            snprintf(err, err_len, "out of memory");
            goto out;
        }
        headers = more;
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    }
    if (auth_header[0]) {
        struct curl_slist *more = curl_slist_append(headers, auth_header);
        if (!more) {
            snprintf(err, err_len, "out of memory");
            goto out;
        }
        headers = more;
    }
    if (headers)
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    cc = curl_easy_perform(curl);
    if (cc != CURLE_OK) {
        transfer_error(cc, detail, base_url, err, err_len);
        goto out;
    }
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
    rc = 0;
out:
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    return rc;
}

int
rs_cli_http_body(const char *method, const char *base_url, const char *path,
                 const char *content_type, const void *body, size_t len, long *status, json_t **doc,
                 char *err, size_t err_len)
{
    struct body b = {NULL, 0, 0};
    json_error_t jerr;
    int rc = perform(method, base_url, path, content_type, body, len, status, &b, err, err_len);

    if (rc == 0 && !(*doc = json_loadb(b.data ? b.data : "", b.len, 0, &jerr))) {
        snprintf(err, err_len, "%s%s answered HTTP %ld with something that is not JSON: %s",
                 base_url, path, *status, jerr.text);
        rc = -1;
    }
    free(b.data);
    return rc;
}

int
rs_cli_http_get_bytes(const char *base_url, const char *path, long *status, char **out, size_t *len,
                      char *err, size_t err_len)
{
    struct body b = {NULL, 0, 0};
    int rc = perform("GET", base_url, path, NULL, NULL, 0, status, &b, err, err_len);

    if (rc != 0) {
        free(b.data);
        return rc;
    }
    if (!b.data && !(b.data = calloc(1, 1))) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    *out = b.data;
    *len = b.len;
    return 0;
}
