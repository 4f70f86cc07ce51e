/* TLS for the agent channel (NNG's tls+tcp://), shared by the server's listener and the agent's
 * dialer: one place that reads the PEM files, checks that a key belongs to its certificate, and
 * builds NNG's configuration (TLS 1.2, Debian's NNG uses mbedTLS 2.28). NNG's own calls take a
 * certificate and key without checking they match; a mismatch would only show as handshakes that
 * fail without a word, so it is refused here, with the files named. Thread-safe. */
#ifndef RS_PROTO_NNG_TLS_H
#define RS_PROTO_NNG_TLS_H

#include <stdbool.h>
#include <stddef.h>

struct nng_tls_config;

struct rs_nng_tls_files {
    const char *cert, *key;   /* own certificate (then intermediates) and its key, PEM; NULL or ""
                                 = none (a client without a certificate) */
    const char *ca;           /* PEM CA file: a client verifies the server with it; a server
                                 asks every client for a certificate it signed; NULL or "" = a
                                 server asks for none (a client must have one) */
    const char *server_name;  /* a client: the name the server's certificate must carry (NULL or
                                 "": the URL's host, NNG's default) */
    bool no_server_check;     /* a client that takes any server certificate: for diagnostics
                                 only (node-agent/tls_probe.c), never for data */
};

/* Builds a server (`server` true) or client configuration from `files`. Refuses, with a message
 * for people in err: a server without a certificate, a client without a CA (unless
 * no_server_check), half a pair, files
 * that do not parse, a key that is not the certificate's. On success *out holds one reference
 * (nng_tls_config_free) and fingerprint (when not NULL) the SHA-256 of the own certificate's DER in
 * 64 hex digits ("" without one). Returns 0, RS_E_CONFIG or -ENOMEM. */
int rs_nng_tls_config_new(bool server, const struct rs_nng_tls_files *files,
                          struct nng_tls_config **out, char fingerprint[65], char *err,
                          size_t err_len);

#endif
