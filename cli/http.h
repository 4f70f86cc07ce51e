/* The CLI's HTTP client (libcurl): one request returning a parsed JSON document (or, for
 * downloads, the body's bytes), with errors a person can act on (server unreachable, non-JSON
 * answer, API error message). */
#ifndef RS_CLI_HTTP_H
#define RS_CLI_HTTP_H

#include <jansson.h>
#include <stddef.h>

/* The bearer token every later request sends ("Authorization: Bearer TOKEN"); NULL or "" = none.
 * The string is copied. Call before any request (not thread-safe). */
void rs_cli_http_set_token(const char *token);
/* The PEM CA file that https:// servers' certificates are verified against from now on (NULL or
 * "": the system's CAs). The path is used, not copied: it must outlive the requests. */
void rs_cli_http_set_ca_file(const char *path);

/* Sends `method` ("GET", "DELETE") to base_url + path. On success *doc owns the JSON body and
 * *status is the HTTP status (error documents are returned too, with their status). On transport
 * failure returns -1 and writes a message to err. */
int rs_cli_http(const char *method, const char *base_url, const char *path, long *status,
                json_t **doc, char *err, size_t err_len);

/* The same with a request body of `len` bytes sent as `content_type` (POST /v1/import). */
int rs_cli_http_body(const char *method, const char *base_url, const char *path,
                     const char *content_type, const void *body, size_t len, long *status,
                     json_t **doc, char *err, size_t err_len);

/* GET base_url + path, any content: *out (NUL-terminated, caller frees) holds the *len bytes of
 * the body and *status the HTTP status. On transport failure returns -1 and writes a message to
 * err. */
int rs_cli_http_get_bytes(const char *base_url, const char *path, long *status, char **out,
                          size_t *len, char *err, size_t err_len);

#endif
