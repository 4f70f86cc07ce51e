/* TLS as a pure byte transformer (mbedTLS 2.28 with memory buffers), for the REST API's libuv
 * connections (http.c): ciphertext received from the socket goes in with rs_tls_stream_input,
 * plaintext comes out of rs_tls_stream_read; plaintext to send goes in with rs_tls_stream_write and
 * the ciphertext to put on the socket comes out of rs_tls_stream_output. No I/O and no libuv here,
 * so the layer is tested by connecting a client stream to a server stream in memory.
 * A configuration (certificate, key, TLS 1.2 or later) is shared by reference: a stream holds the
 * configuration it started with, so a reload (new configuration) changes only new streams.
 * Not thread-safe: one configuration and its streams belong to one thread (the loop). */
#ifndef RS_SERVER_TLS_STREAM_H
#define RS_SERVER_TLS_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rs_tls_conf rs_tls_conf;
typedef struct rs_tls_stream rs_tls_stream;

/* Errors of the layer, beyond the RS_E_* ones (common/error.h) and -errno. */
enum {
    RS_TLS_E_HANDSHAKE = -10100, /* the peer's handshake failed (bad version, cipher, cert) */
    RS_TLS_E_PLAINTEXT,          /* the peer speaks plain HTTP to the TLS port */
    RS_TLS_E_PROTOCOL,           /* a record failed after the handshake (corrupt, bad MAC) */
    RS_TLS_E_CLOSED,             /* the peer sent close_notify */
};

/* A server configuration from PEM files: `cert_path` (the certificate, then any intermediates),
 * `key_path` (its private key, unencrypted). TLS 1.2 is the lowest version offered. Refuses (and
 * writes why, for people, to err): a file that does not parse, a key that does not belong to the
 * certificate. On success *out holds one reference. Returns 0, -errno or RS_E_CONFIG. */
int rs_tls_conf_server_new(const char *cert_path, const char *key_path, rs_tls_conf **out,
                           char *err, size_t err_len);

/* A client configuration (tests, tools): verifies the server against the PEM CA file `ca_path`
 * and the name `server_name` (NULL: the name is not checked). Same returns as above. */
int rs_tls_conf_client_new(const char *ca_path, const char *server_name, rs_tls_conf **out,
                           char *err, size_t err_len);

/* SHA-256 of the DER of the configuration's own certificate (the server's), as 64 lowercase hex
 * digits and a NUL in out[65]. A client configuration gives "". */
void rs_tls_conf_fingerprint(const rs_tls_conf *conf, char out[65]);

/* Reference counting: hold adds one, release drops one and frees the configuration with the
 * last. release(NULL) does nothing. */
void rs_tls_conf_hold(rs_tls_conf *conf);
void rs_tls_conf_release(rs_tls_conf *conf);

/* A new stream (one connection) on `conf`, which it holds until freed. Returns 0 or -ENOMEM. */
int rs_tls_stream_new(rs_tls_conf *conf, rs_tls_stream **out);

/* Frees the stream and its buffers and releases its configuration; sets *s to NULL. */
void rs_tls_stream_free(rs_tls_stream **s);

/* Appends `len` bytes received from the peer. They are consumed by rs_tls_stream_read; at most
 * RS_TLS_STREAM_MAX_INPUT bytes may wait (beyond: RS_E_FULL, nothing appended). The first bytes of
 * a connection that are plain HTTP (a request line, not a TLS record) make read return
 * RS_TLS_E_PLAINTEXT. Returns 0, -ENOMEM or RS_E_FULL. */
#define RS_TLS_STREAM_MAX_INPUT (1u << 20)
int rs_tls_stream_input(rs_tls_stream *s, const void *data, size_t len);

/* Advances the handshake and decrypts: writes up to `cap` plaintext bytes to `buf` and their
 * number to *n (0: more input is needed). Handshake answers wait in the output: send them after
 * each call. Returns 0, or a RS_TLS_E_* code (the connection is done: close it; the handshake may
 * have queued an alert to send first), or -ENOMEM. Call again while it gives bytes. */
int rs_tls_stream_read(rs_tls_stream *s, void *buf, size_t cap, size_t *n);

/* Encrypts `len` plaintext bytes into the output. Only after the handshake (else
 * RS_TLS_E_HANDSHAKE). Returns 0, RS_TLS_E_PROTOCOL or -ENOMEM. */
int rs_tls_stream_write(rs_tls_stream *s, const void *data, size_t len);

/* Queues a close_notify alert (the polite end of a connection) in the output. */
void rs_tls_stream_close_notify(rs_tls_stream *s);

/* Hands over the ciphertext waiting to be sent: *data (malloc'd, the caller frees) and *len, or
 * NULL and 0 when there is none. */
void rs_tls_stream_output(rs_tls_stream *s, uint8_t **data, size_t *len);

/* Whether the handshake has completed. */
bool rs_tls_stream_established(const rs_tls_stream *s);

/* Why the last call failed, for people (mbedTLS's words; "" when nothing failed). The text may
 * hold nothing from the peer but is escaped by the logger like every message. */
const char *rs_tls_stream_error(const rs_tls_stream *s);

#endif
