/* PEM files for TLS (mbedTLS 2.28), read the same way by the HTTPS layer (server/tls_stream.c) and
 * the agent channel's configurations (proto/nng_tls.c): certificates, a private key that must
 * belong to its certificate, and the SHA-256 fingerprint operators compare with
 * `openssl x509 -noout -fingerprint -sha256`. Errors name the file and say why, for people.
 * Thread-safe (no shared state). */
#ifndef RS_PROTO_TLS_PEM_H
#define RS_PROTO_TLS_PEM_H

#include <mbedtls/pk.h>
#include <mbedtls/x509_crt.h>
#include <stddef.h>

/* Appends the certificates of the PEM file `path` to `crt` (initialized by the caller). `what`
 * names the file's role in the message ("certificate", "CA file"). Returns 0 or RS_E_CONFIG. */
int rs_tls_pem_certs(mbedtls_x509_crt *crt, const char *path, const char *what, char *err,
                     size_t err_len);

/* Loads a certificate (then intermediates) into `crt` and its unencrypted private key into `key`
 * (both initialized by the caller) and refuses a key that does not belong to the certificate.
 * Returns 0 or RS_E_CONFIG; on error the caller frees what it initialized, as always. */
int rs_tls_pem_pair(mbedtls_x509_crt *crt, mbedtls_pk_context *key, const char *cert_path,
                    const char *key_path, char *err, size_t err_len);

/* SHA-256 of the DER of the first certificate in `crt`, 64 lowercase hex digits and a NUL. */
void rs_tls_pem_fingerprint(const mbedtls_x509_crt *crt, char out[65]);

#endif
